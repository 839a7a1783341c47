-- WirePlumber 0.4 on a head unit, system-wide (installed in /etc/wireplumber/main.lua.d/).
-- There is no user session bus: the features that need one are off.

-- Device reservation is a desktop protocol on the session bus; the system-wide daemon is
-- the only user of the cards.
alsa_monitor.properties["alsa.reserve"] = false

-- Who may do what is earshot-access.lua's alone: the default access script grants by
-- properties a client sets itself (pipewire.access, media.category), and Flatpak's
-- permission portal lives on a session bus.
default_access.enabled = false
default_access.properties["enable-flatpak-portal"] = false
load_script("@wireplumberdir@/scripts/earshot-access.lua")
