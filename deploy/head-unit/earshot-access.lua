-- Who may do what on the head unit's PipeWire (WirePlumber 0.4, loaded by 50-head-unit.lua).
--
-- The daemon (earshot-head-unit.conf) lets no client in until this script has decided:
-- module-access waits for every client but WirePlumber itself. A client is trusted when
-- the daemon says it runs as one of the users in EARSHOT_PIPEWIRE_TRUSTED_UIDS (root,
-- pipewire, earshot: set by wireplumber.service), from the socket's credentials
-- (pipewire.sec.uid), never from anything the client says of itself. Trusted clients get
-- every permission. Every other client, an application, gets:
--   - the core, to speak at all, and the client-node factory, to make its own streams;
--   - nothing else: no device, no sink or source, no other client's node, no link, no
--     factory that makes links or devices, no metadata. It cannot see them, so it cannot
--     set their volume or mute, move them, link them or destroy them.
-- An application's nodes may only be playback streams (Stream/Output/Audio). Any other
-- node it makes (a capture stream, which WirePlumber would link to a microphone or a
-- sink's monitor; a sink or source, which could become the default and take everybody's
-- audio) is destroyed as soon as it appears, before WirePlumber's policy links it.

local trusted = {}
for uid in string.gmatch(os.getenv("EARSHOT_PIPEWIRE_TRUSTED_UIDS") or "0", "%d+") do
  trusted[uid] = true
end

local allowed_class = "Stream/Output/Audio"

factories_om = ObjectManager { Interest { type = "factory" } }
clients_om = ObjectManager { Interest { type = "client" } }
nodes_om = ObjectManager { Interest { type = "node" } }

-- Nodes seen before the client that made them: checked when it comes.
local waiting = {}

local function isTrusted(client)
  return trusted[client.properties["pipewire.sec.uid"] or ""] == true
end

local function clientById(id)
  return clients_om:lookup { Constraint { "bound-id", "=", id, type = "gobject" } }
end

local function factoryId(name)
  local factory = factories_om:lookup { Constraint { "factory.name", "=", name } }
  return factory and factory["bound-id"]
end

-- Applies the rule to one node of an application's client.
local function checkNode(node, client)
  if isTrusted(client) then
    return
  end
  local class = node.properties["media.class"] or ""
  if class ~= allowed_class then
    Log.warning(node, string.format("earshot: destroying node %d (%s, media.class '%s') of client %d (uid %s): "
      .. "applications may only play", node["bound-id"], node.properties["node.name"] or "",
      class, client["bound-id"], client.properties["pipewire.sec.uid"] or "?"))
    node:request_destroy()
  end
end

local function nodeAdded(node)
  local owner = tonumber(node.properties["client.id"] or "")
  if owner == nil then
    -- Made by the daemon itself (its configuration's objects) or by WirePlumber's own
    -- factories on its behalf: trusted.
    return
  end
  local client = clientById(owner)
  if client then
    checkNode(node, client)
  else
    waiting[owner] = waiting[owner] or {}
    table.insert(waiting[owner], node)
  end
end

clients_om:connect("object-added", function (_, client)
  local id = client["bound-id"]
  if isTrusted(client) then
    client:update_permissions { ["any"] = "all" }
    Log.info(client, string.format("earshot: client %d (uid %s, %s) is trusted", id,
      client.properties["pipewire.sec.uid"] or "?", client.properties["application.name"] or ""))
  else
    local permissions = { ["any"] = "-", [0] = "rx" }
    local clientNode = factoryId("client-node")
    if clientNode then
      permissions[clientNode] = "r"
    end
    client:update_permissions(permissions)
    Log.info(client, string.format("earshot: client %d (uid %s, %s) may play its own streams only", id,
      client.properties["pipewire.sec.uid"] or "?", client.properties["application.name"] or ""))
  end
  for _, node in ipairs(waiting[id] or {}) do
    checkNode(node, client)
  end
  waiting[id] = nil
end)

clients_om:connect("object-removed", function (_, client)
  waiting[client["bound-id"]] = nil
end)

nodes_om:connect("object-added", function (_, node)
  nodeAdded(node)
  -- A node's class can change after it appears (a client updates its properties).
  node:connect("notify::properties", function (changed)
    local owner = tonumber(changed.properties["client.id"] or "")
    local client = owner and clientById(owner)
    if client then
      checkNode(changed, client)
    end
  end)
end)

-- Clients are decided once the factories are known (the client-node factory's id is part
-- of an application's permissions).
factories_om:connect("installed", function ()
  clients_om:activate()
  nodes_om:activate()
end)
factories_om:activate()
