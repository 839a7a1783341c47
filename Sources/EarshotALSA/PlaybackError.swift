/// Why an ALSA playback device could not be opened or stopped playing.
public enum PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `snd_pcm_open` failed, e.g. the PCM name is unknown or the device is busy.
    case cannotOpen(device: String, message: String)
    /// The device cannot play with the requested rate, format or channel count exactly.
    case unsupported(device: String, message: String)
    /// The device went away (`-ENODEV`, `SND_PCM_STATE_DISCONNECTED`, or `-EBADFD` / `-EIO`
    /// that a prepare does not cure).
    case deviceGone(device: String, message: String)
    /// Any other unrecoverable error; `code` is libasound's negative errno value.
    case io(device: String, code: Int32, message: String)

    /// The device the error is about.
    public var device: String {
        switch self {
        case .cannotOpen(let device, _), .unsupported(let device, _),
             .deviceGone(let device, _), .io(let device, _, _):
            device
        }
    }

    public var description: String {
        switch self {
        case .cannotOpen(let device, let message):
            "cannot open ALSA device '\(device)' for playback: \(message)"
        case .unsupported(let device, let message):
            "ALSA device '\(device)' cannot play as requested: \(message)"
        case .deviceGone(let device, let message):
            "ALSA device '\(device)' is gone: \(message)"
        case .io(let device, let code, let message):
            "ALSA playback on '\(device)' failed (error \(code)): \(message)"
        }
    }
}
