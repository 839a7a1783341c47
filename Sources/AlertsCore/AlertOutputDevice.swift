/// The ALSA PCM an alert's audio is opened on, carrying the alert's media role to PipeWire
/// (`media.role`), so that the system mixer's policy knows an emergency from a notification.
///
/// ALSA's `pipewire` plugin takes the role as its `ROLE` argument. `pipewire` and
/// `pipewire:…` get it added; so does any other PCM whose definition is a `pipewire` one
/// (`default`, with Debian's pipewire-alsa), which is then opened as `pipewire:` with that
/// definition's server and playback node. Any other PCM is opened as named.
public enum AlertOutputDevice {
    /// The PCM to open for audio of `role` on `device`, whose definition is of plugin
    /// `type` with top-level string `fields` (nil when unknown).
    public static func name(for device: String, role: String, type: String?, fields: [String: String] = [:]) -> String {
        guard !role.isEmpty, role.allSatisfy({ $0.isLetter || $0.isNumber }) else { return device }
        if device == "pipewire" { return "pipewire:ROLE=\(role)" }
        if device.hasPrefix("pipewire:") {
            return device.uppercased().contains("ROLE=") ? device : device + ",ROLE=\(role)"
        }
        guard type == "pipewire" else { return device }
        var arguments: [String] = []
        if let server = fields["server"], !server.isEmpty, server.allSatisfy(isPlain) { arguments.append("SERVER=\(server)") }
        if let node = fields["playback_node"], !node.isEmpty, node != "-1", node.allSatisfy(isPlain) { arguments.append("NODE=\(node)") }
        return "pipewire:" + (arguments + ["ROLE=\(role)"]).joined(separator: ",")
    }

    /// A character that needs no quoting in an ALSA PCM argument.
    private static func isPlain(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || "-_./".contains(character)
    }
}
