import EarshotSync
import Glibc
@testable import EarshotALSA

/// The ALSA test devices, built from libasound's own plugins (no sound hardware needed).
///
/// libasound reads its configuration once per process (and again only when a file in
/// `ALSA_CONFIG_PATH` changes), so the first touch of `TestDevices.shared` writes a private
/// configuration and sets `ALSA_CONFIG_PATH` before any ALSA call. Every test must touch it
/// first.
struct TestDevices: Sendable {
    /// `file` plugin over `null`: captures return the bytes of `infile`, at any rate, width
    /// and channel count, as fast as they are read.
    static let mic = "earshot_mic"
    /// Like `mic`, but strictly one channel (a `multi` slave with one binding).
    static let mono = "earshot_mono"
    /// Like `mic`, but strictly two channels.
    static let stereo = "earshot_stereo"
    /// Like `mic`, but only 48 kHz: a `plug` over `null` at 48000 Hz, which may not resample
    /// once rate resampling is disabled.
    static let fixed48k = "earshot_fixed48k"
    /// Plain `null` (which writes nothing into capture buffers).
    static let silence = "earshot_silence"
    /// Like `mic`, but its input file holds only the first `shortInfileLength` bytes.
    static let short = "earshot_short"
    static let shortInfileLength = 1000
    /// Like `mic`, defined in its own file (`hotplugConfig`) that a test rewrites to unplug it.
    static let unpluggable = "earshot_unpluggable"

    /// The private directory holding the configuration and the input files.
    let directory: String
    /// The main test configuration.
    let config: String
    /// The configuration file holding only `unpluggable`.
    let hotplugConfig: String
    /// The input file of `unpluggable` (a copy of `infileBytes`).
    let unpluggableInfile: String
    /// What every microphone captures: 2 MiB of fixed pseudo-random bytes.
    let infileBytes: [UInt8]

    static let shared: TestDevices = make()

    private static func make() -> TestDevices {
        var template = Array("/tmp/earshot-alsa-tests.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        let directory = String(cString: made)

        var bytes = [UInt8](repeating: 0, count: 2 << 20)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in bytes.indices {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        let infile = directory + "/in.raw"
        let unpluggableInfile = directory + "/unpluggable.raw"
        writeFile(infile, bytes)
        writeFile(unpluggableInfile, bytes)
        let shortInfile = directory + "/short.raw"
        writeFile(shortInfile, Array(bytes.prefix(shortInfileLength)))

        func fileMic(_ name: String, slave: String, infile: String) -> String {
            "pcm.\(name) {\n  type file\n  slave.pcm \(slave)\n  file \"/dev/null\"\n  infile \"\(infile)\"\n  format \"raw\"\n}\n"
        }
        let config = directory + "/test.conf"
        let text = fileMic(mic, slave: "\"null\"", infile: infile)
            + fileMic(mono, slave: "{ type multi slaves.a { pcm \"null\" channels 1 } bindings.0 { slave a channel 0 } }",
                      infile: infile)
            + fileMic(stereo, slave: "{ type multi slaves.a { pcm \"null\" channels 2 } "
                          + "bindings.0 { slave a channel 0 } bindings.1 { slave a channel 1 } }",
                      infile: infile)
            + fileMic(fixed48k, slave: "{ type plug slave { pcm \"null\" rate 48000 } }", infile: infile)
            + fileMic(short, slave: "\"null\"", infile: shortInfile)
            + "pcm.\(silence) {\n  type null\n}\n"
        writeFile(config, Array(text.utf8))
        let hotplugConfig = directory + "/hotplug.conf"
        writeFile(hotplugConfig, Array(fileMic(unpluggable, slave: "\"null\"", infile: unpluggableInfile).utf8))

        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(config):\(hotplugConfig)", 1)
        TestDirectory.path = directory
        atexit { TestDirectory.remove() }
        return TestDevices(directory: directory, config: config, hotplugConfig: hotplugConfig,
                           unpluggableInfile: unpluggableInfile, infileBytes: bytes)
    }

    /// Replaces `hotplugConfig` by an empty file (a new inode, so libasound notices on its
    /// next open) and deletes the unpluggable device's input file.
    func unplug() {
        let replacement = directory + "/hotplug.conf.new"
        TestDevices.writeFile(replacement, Array("# unplugged\n".utf8))
        precondition(rename(replacement, hotplugConfig) == 0, "rename: \(String(cString: strerror(errno)))")
        unlink(unpluggableInfile)
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0, "open \(path): \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            precondition(written > 0, "write \(path): \(String(cString: strerror(errno)))")
            offset += written
        }
    }
}

/// The test directory, for removal at process exit (an `atexit` handler cannot capture).
private enum TestDirectory {
    nonisolated(unsafe) static var path: String?

    static func remove() {
        guard let path else { return }
        for name in ["in.raw", "unpluggable.raw", "short.raw", "test.conf", "hotplug.conf", "hotplug.conf.new"] {
            unlink(path + "/" + name)
        }
        rmdir(path)
    }
}

/// Everything a stream's callbacks reported, recorded under a lock.
final class CaptureRecorder: Sendable {
    struct Snapshot: Sendable {
        var bytes: [UInt8] = []
        var frames = 0
        var callbacks = 0
        var timestamps: [UInt64] = []
        var sizeMismatches = 0
        var ends: [ALSAError?] = []
        var dataAfterEnd = 0
        var dataAfterStopRequest = 0
        var framesAfterStopRequest = 0
        var stopRequested = false
    }

    private let state = Locked(Snapshot())
    private let bytesPerFrame: Int
    /// When set, `onData` calls `stop()` on the stream once this many frames have arrived.
    private let stopAfterFrames: Int?
    /// Whether that stop drains (`stop(draining: true)`).
    private let drainingStop: Bool
    /// Called on the reading thread with the callback count, after recording.
    private let onCallback: (@Sendable (Int) -> Void)?

    init(bytesPerFrame: Int, stopAfterFrames: Int? = nil, drainingStop: Bool = false, onCallback: (@Sendable (Int) -> Void)? = nil) {
        self.bytesPerFrame = bytesPerFrame
        self.stopAfterFrames = stopAfterFrames
        self.drainingStop = drainingStop
        self.onCallback = onCallback
    }

    var snapshot: Snapshot { state.withLock { $0 } }
    /// Cheap to poll (no copy of the recorded bytes).
    var callbacks: Int { state.withLock { $0.callbacks } }
    var ended: Bool { state.withLock { !$0.ends.isEmpty } }

    /// Starts `stream`, recording into this recorder (what `direct` does not take).
    func start(_ stream: CaptureStream, timestamps: CaptureTimestamps = .everyRead, direct: (any DirectCaptureConsumer)? = nil) {
        stream.start(
            timestamps: timestamps,
            direct: direct,
            onData: { bytes, frames, time in
                let (count, shouldStop) = self.state.withLock { state -> (Int, Bool) in
                    if !state.ends.isEmpty { state.dataAfterEnd += 1 }
                    if state.stopRequested {
                        state.dataAfterStopRequest += 1
                        state.framesAfterStopRequest += frames
                    }
                    if bytes.count != frames * self.bytesPerFrame { state.sizeMismatches += 1 }
                    state.bytes += bytes
                    state.frames += frames
                    state.callbacks += 1
                    state.timestamps.append(time)
                    var shouldStop = false
                    if let limit = self.stopAfterFrames, state.frames >= limit, !state.stopRequested {
                        state.stopRequested = true
                        shouldStop = true
                    }
                    return (state.callbacks, shouldStop)
                }
                self.onCallback?(count)
                if shouldStop { stream.stop(draining: self.drainingStop) }
            },
            onEnd: { error in
                self.state.withLock { $0.ends.append(error) }
            })
    }
}

/// Polls `condition` every few milliseconds (never blocking the cooperative pool) until it
/// holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}
