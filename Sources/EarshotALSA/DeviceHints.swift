import CALSA
import Glibc

/// A PCM that libasound's device hints name.
public struct PCMHint: Sendable, Equatable {
    public let name: String
    /// The first line of the hint's description ("HDA Intel PCH, ALC892 Analog").
    public let description: String
    /// Whether the hint is for capture (an `IOID` of `Input`, or none: both directions).
    public let capture: Bool
    /// Whether it is a kernel device (`hw:`), a candidate for the built-in microphone.
    public var hardware: Bool { name.hasPrefix("hw:") }
}

/// The PCMs the ALSA configuration in use defines, through `snd_device_name_hint`.
public enum DeviceHints {
    /// Every PCM hint in configuration order, except `null` (which discards audio and
    /// records zeros: not a device).
    public static func pcms() -> [PCMHint] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        let (result, _) = ALSADiagnostics.collecting { snd_device_name_hint(-1, "pcm", &hints) }
        guard result >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var found: [PCMHint] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = take(snd_device_name_get_hint(hint, "NAME")), name != "null" else { continue }
            let description = take(snd_device_name_get_hint(hint, "DESC"))?
                .split(separator: "\n").first.map(String.init) ?? name
            let direction = take(snd_device_name_get_hint(hint, "IOID"))
            found.append(PCMHint(name: name, description: description, capture: direction == nil || direction == "Input"))
        }
        return found
    }

    /// A string libasound allocated, copied and freed.
    private static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// The ALSA configuration files and device nodes whose changes can change the devices.
public enum ALSAConfiguration {
    /// Makes the next hint or open read the configuration again, even if a file changed
    /// within the second of the last read (libasound compares modification times). Call it
    /// only from the thread that does the process's ALSA work.
    public static func reload() {
        _ = snd_config_update_free_global()
    }

    /// The configuration files in use: `ALSA_CONFIG_PATH`'s files (else libasound's
    /// `alsa.conf`) and the system and user files it loads.
    public static func filesInUse(environment: [String: String]) -> [String] {
        var files: [String] = []
        if let path = environment["ALSA_CONFIG_PATH"], !path.isEmpty {
            files += path.split(separator: ":").map(String.init)
        } else {
            files.append("/usr/share/alsa/alsa.conf")
        }
        files.append("/etc/asound.conf")
        if let home = environment["HOME"], !home.isEmpty {
            files.append(home + "/.asoundrc")
            files.append(home + "/.asoundrc.asoundconf")
            let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
            files.append(configHome + "/alsa/asoundrc")
        }
        return files
    }

    /// Where kernel sound devices appear and vanish.
    public static let deviceDirectory = "/dev/snd"
}
