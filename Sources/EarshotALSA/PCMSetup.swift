import CALSA
import Glibc

/// Opening and setting up a PCM, the same way for capture and playback.
enum PCMSetup<Direction: ALSADirection> {
    /// Opens `device` in non-blocking mode for `stream`.
    static func open(_ device: String, stream: snd_pcm_stream_t) throws(ALSAStreamError<Direction>) -> OpaquePointer {
        var handle: OpaquePointer?
        let (result, details) = ALSADiagnostics.collecting {
            snd_pcm_open(&handle, device, stream, SND_PCM_NONBLOCK)
        }
        guard result >= 0, let handle else {
            throw .cannotOpen(device: device, message: ALSADiagnostics.message(result, details: details))
        }
        return handle
    }

    /// An error while configuring an open PCM: `.deviceGone` for `-ENODEV`, else `.unsupported`.
    static func setupError(device: String, code: Int32, details: [String], what: String) -> ALSAStreamError<Direction> {
        let message = what + ": " + ALSADiagnostics.message(code, details: details)
        if code == -ENODEV { return .deviceGone(device: device, message: message) }
        return .unsupported(device: device, message: message)
    }

    /// The non-blocking, close-on-exec pipe that wakes a PCM's thread.
    static func wakePipe(device: String) throws(ALSAStreamError<Direction>) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            let code = errno
            throw .io(device: device, code: -code, message: "cannot create the wake-up pipe: " + alsaMessage(-code))
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }
}
