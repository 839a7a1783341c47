import Foundation

/// An ALSA configuration for tests, built from ALSA's own plugins: microphones that read a
/// file (`file` plugin with `infile` over `null`), optionally strict about their channel
/// count (a `multi` plugin underneath), and speakers that write to a file. Hand
/// `environment` to the service so libasound loads it after the system's alsa.conf.
public struct ALSATestDevices: Sendable {
    public let configPath: URL
    private var definitions: [String] = []

    public init(configPath: URL) {
        self.configPath = configPath
    }

    /// A capture PCM `name` returning the bytes of `infile`; `channels` makes it accept
    /// only that many channels (any, when nil).
    public mutating func microphone(_ name: String, infile: URL, channels: Int? = nil) {
        let slave: String
        if let channels {
            let bindings = (0..<channels).map { "bindings.\($0) { slave a channel \($0) }" }.joined(separator: " ")
            slave = "{ type multi slaves.a { pcm \"null\" channels \(channels) } \(bindings) }"
        } else {
            slave = "\"null\""
        }
        definitions.append("pcm.\(name) { type file slave.pcm \(slave) file \"/dev/null\" infile \"\(infile.path)\" format \"raw\" }")
    }

    /// A capture PCM `name` returning the bytes of `infile` that only one user may open at
    /// a time, as hardware: others get `-EBUSY` while it is open (the `earshot_unpluggable`
    /// plugin `libEarshotUnpluggablePCM.so` of Sources/Plugins, with `exclusive`; its presence
    /// file is made next to the configuration).
    /// `rate`, when given, is the only sample rate it accepts.
    public mutating func exclusiveMicrophone(_ name: String, infile: URL, library: URL, rate: Int? = nil) throws {
        let presence = configPath.deletingLastPathComponent().appendingPathComponent(name + ".present")
        guard FileManager.default.fileExists(atPath: presence.path) || FileManager.default.createFile(atPath: presence.path, contents: nil) else {
            throw HarnessError("cannot create \(presence.path)")
        }
        definitions.append("pcm_type.earshot_unpluggable { lib \"\(library.path)\" }")
        definitions.append("pcm.\(name) { type earshot_unpluggable infile \"\(infile.path)\" presence \"\(presence.path)\" exclusive true"
                           + (rate.map { " rate \($0)" } ?? "") + " }")
    }

    /// A PCM `name` of PipeWire's ALSA plugin (pipewire-alsa), reaching the daemon at
    /// `server` (the plugin's own default when nil), capturing from the node `captureNode`
    /// (the default source when nil).
    public mutating func pipeWire(_ name: String, server: String? = nil, captureNode: String? = nil) {
        definitions.append("pcm.\(name) { type pipewire" + (server.map { " server \"\($0)\"" } ?? "")
                           + (captureNode.map { " capture_node \"\($0)\"" } ?? "") + " }")
    }

    /// A playback PCM `name` writing what it plays to `outfile` (`raw` or `wav`).
    public mutating func speaker(_ name: String, outfile: URL, format: String = "raw") {
        definitions.append("pcm.\(name) { type file slave.pcm \"null\" file \"\(outfile.path)\" format \"\(format)\" }")
    }

    /// Writes the configuration file.
    public func write() throws {
        try (definitions.joined(separator: "\n") + "\n").write(to: configPath, atomically: true, encoding: .utf8)
    }

    /// `ALSA_CONFIG_PATH` for a process that should see these devices.
    public var environment: [String: String] {
        ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + configPath.path]
    }
}
