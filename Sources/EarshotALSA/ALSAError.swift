import CALSA
import Glibc

/// Which way a PCM's audio goes, for the words of its errors.
public protocol ALSADirection: Sendable {
    /// "capture" or "playback".
    static var noun: String { get }
    /// "capture" or "play".
    static var verb: String { get }
}

/// Audio coming in from a capture PCM.
public enum ALSACapture: ALSADirection {
    public static let noun = "capture"
    public static let verb = "capture"
}

/// Audio going out to a playback PCM.
public enum ALSAPlayback: ALSADirection {
    public static let noun = "playback"
    public static let verb = "play"
}

/// Why an ALSA device could not be opened, or stopped delivering or playing.
public enum ALSAStreamError<Direction: ALSADirection>: Error, Sendable, Equatable, CustomStringConvertible {
    /// `snd_pcm_open` failed, e.g. the PCM name is unknown or the device is busy.
    case cannotOpen(device: String, message: String)
    /// The device cannot work with the requested rate, width or channel count exactly.
    case unsupported(device: String, message: String)
    /// The device went away (`-ENODEV`, `SND_PCM_STATE_DISCONNECTED`, or `-EBADFD` / `-EIO`
    /// that does not recover).
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
            "cannot open ALSA device '\(device)' for \(Direction.noun): \(message)"
        case .unsupported(let device, let message):
            "ALSA device '\(device)' cannot \(Direction.verb) as requested: \(message)"
        case .deviceGone(let device, let message):
            "ALSA device '\(device)' is gone: \(message)"
        case .io(let device, let code, let message):
            "ALSA \(Direction.noun) on '\(device)' failed (error \(code)): \(message)"
        }
    }
}

/// Errors of capture PCMs.
public typealias ALSAError = ALSAStreamError<ALSACapture>
/// Errors of playback PCMs.
public typealias PlaybackError = ALSAStreamError<ALSAPlayback>

/// libasound's text for a negative error code (`snd_strerror`).
func alsaMessage(_ code: Int32) -> String {
    guard let text = snd_strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// What the reading thread does about a negative result from libasound.
enum ReadDisposition: Equatable, Sendable {
    /// Not an error: nothing to read yet (`-EAGAIN`) or interrupted (`-EINTR`). Poll again.
    case retry
    /// An overrun (`-EPIPE`): `snd_pcm_recover`, then start the stream again.
    case recoverOverrun
    /// A suspend (`-ESTRPIPE`): resume (waiting while the device says `-EAGAIN`), else prepare;
    /// then start the stream again.
    case recoverSuspend
    /// `-EBADFD` / `-EIO` on a device that is not disconnected: prepare and start again once;
    /// if that fails too, the device is gone.
    case prepareOrGone
    /// The device has vanished: end the stream with `.deviceGone`.
    case deviceGone
    /// Anything else: end the stream with `.io`.
    case fatal
}

/// Maps a negative libasound result and the PCM's state to what the reading thread does.
/// A disconnected state wins over every code.
func classify(errorCode: Int32, state: snd_pcm_state_t) -> ReadDisposition {
    if state == SND_PCM_STATE_DISCONNECTED { return .deviceGone }
    switch -errorCode {
    case EAGAIN, EINTR: return .retry
    case EPIPE: return .recoverOverrun
    case ESTRPIPE: return .recoverSuspend
    case ENODEV: return .deviceGone
    case EBADFD, EIO: return .prepareOrGone
    default: return .fatal
    }
}
