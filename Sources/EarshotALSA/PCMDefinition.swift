import CALSA

/// What the ALSA configuration says a PCM is, read without opening it: its plugin type and
/// its top-level string fields, with the definition's arguments expanded (as
/// `snd_pcm_open` sees them).
public struct PCMDefinition: Sendable, Equatable {
    /// The plugin (`hw`, `file`, `pipewire`, …).
    public let type: String
    /// The string fields at the definition's top level (`server`, `file`, …), by name.
    public let fields: [String: String]

    public init(type: String, fields: [String: String]) {
        self.type = type
        self.fields = fields
    }

    /// The definition of the PCM `name` (`mic`, `hw:CARD=PCH,DEV=0`) in the configuration
    /// in use; nil when there is none or it has no type. Call it from the thread that does
    /// the process's ALSA work.
    public static func of(_ name: String) -> PCMDefinition? {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return nil }
        defer { snd_config_unref(top) }
        var found: OpaquePointer?
        let (searched, _) = ALSADiagnostics.collecting { snd_config_search_definition(top, "pcm", name, &found) }
        guard searched >= 0, let definition = found else { return nil }
        // An expanded copy of the definition, freed as snd_pcm_open frees it.
        defer { snd_config_delete(definition) }
        var fields: [String: String] = [:]
        var position = snd_config_iterator_first(definition)
        while position != snd_config_iterator_end(definition) {
            defer { position = snd_config_iterator_next(position) }
            guard let node = snd_config_iterator_entry(position), snd_config_get_type(node) == SND_CONFIG_TYPE_STRING else { continue }
            var id: UnsafePointer<CChar>?
            var value: UnsafePointer<CChar>?
            guard snd_config_get_id(node, &id) >= 0, let id, snd_config_get_string(node, &value) >= 0, let value else { continue }
            fields[String(cString: id)] = String(cString: value)
        }
        guard let type = fields.removeValue(forKey: "type") else { return nil }
        return PCMDefinition(type: type, fields: fields)
    }
}
