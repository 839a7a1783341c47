-- WirePlumber 0.4 on a head unit, system-wide (installed in /etc/wireplumber/main.lua.d/).
-- There is no user session bus: the features that need one are off.

-- Device reservation is a desktop protocol on the session bus; the system-wide daemon is
-- the only user of the cards.
alsa_monitor.properties["alsa.reserve"] = false

-- Flatpak's permission portal lives on a session bus.
default_access.properties["enable-flatpak-portal"] = false
