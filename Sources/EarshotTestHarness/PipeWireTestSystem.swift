import EarshotDBus
import Foundation
import Glibc

/// A real PipeWire daemon and WirePlumber for a test, without sound hardware: their own
/// `XDG_RUNTIME_DIR` and session bus in a temporary directory, a null sink `speakers` as
/// the default output and a virtual source `mic` as the default input. Streams played
/// with `play` are heard by recording the sink's monitor (`level`).
public final class PipeWireTestSystem: Sendable {
    public let directory: URL
    private let sessionBus: ChildProcess
    public let sessionBusAddress: String
    let processes = Locked<[ChildProcess]>([])

    /// The environment a client of this daemon needs (merge it into a service's).
    public var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory.path, "PIPEWIRE_RUNTIME_DIR": runtimeDirectory.path]
    }

    public var runtimeDirectory: URL { directory.appendingPathComponent("runtime") }

    /// Whether pipewire-pulse runs too (PulseAudio programs, `paplay`, play through it).
    public let pulse: Bool

    /// The user `play` runs its players as, under the head unit's access rules; nil: the
    /// daemon's own, with every permission.
    public let applicationUser: TestUser.Identity?

    /// A new system; with `daemons` false, only its directories and session bus, the
    /// daemons started later by `startDaemons`; with `pulse`, pipewire-pulse as well. With
    /// `applicationUser`, the daemons run with the head unit's configuration and access
    /// rules (`deploy/head-unit/`: the daemon's own clients, root's, are trusted) and `play`
    /// plays as that user, an application.
    public static func start(daemons: Bool = true, pulse: Bool = false, applicationUser: String? = nil) async throws -> PipeWireTestSystem {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("earshot-pipewire-\(UUID().uuidString.prefix(8))")
        // An application user must reach the daemon's socket (not list the directory).
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("runtime"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: applicationUser == nil ? 0o700 : 0o711])
        var application: TestUser.Identity?
        if let applicationUser { application = try await TestUser.ensure(applicationUser, in: [], ordinary: true) }
        let system = try PipeWireTestSystem(directory: directory, pulse: pulse, applicationUser: application)
        if application != nil { try system.writeHeadUnitConfiguration() }
        if daemons { try await system.startDaemons() }
        return system
    }

    /// The project's `deploy/head-unit/`, from this file's place in the package.
    static let headUnitDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("deploy/head-unit")

    /// The head unit's daemon configuration and WirePlumber's access script, where these
    /// daemons read their configuration (`XDG_CONFIG_HOME`).
    private func writeHeadUnitConfiguration() throws {
        let config = directory.appendingPathComponent("config")
        let wireplumber = config.appendingPathComponent("wireplumber")
        for subdirectory in ["pipewire", "wireplumber/main.lua.d", "wireplumber/scripts"] {
            try FileManager.default.createDirectory(at: config.appendingPathComponent(subdirectory), withIntermediateDirectories: true)
        }
        let source = Self.headUnitDirectory
        try FileManager.default.copyItem(at: source.appendingPathComponent("earshot-head-unit.conf"),
                                         to: config.appendingPathComponent("pipewire/earshot-head-unit.conf"))
        try FileManager.default.copyItem(at: source.appendingPathComponent("earshot-access.lua"),
                                         to: wireplumber.appendingPathComponent("scripts/earshot-access.lua"))
        let main = try String(contentsOf: source.appendingPathComponent("50-head-unit.lua"), encoding: .utf8)
            .replacingOccurrences(of: "@wireplumberdir@", with: wireplumber.path)
        try main.write(to: wireplumber.appendingPathComponent("main.lua.d/50-head-unit.lua"), atomically: true, encoding: .utf8)
    }

    private init(directory: URL, pulse: Bool, applicationUser: TestUser.Identity?) throws {
        self.directory = directory
        self.pulse = pulse
        self.applicationUser = applicationUser
        // WirePlumber 0.4 wants a session bus; a private one.
        let addressFile = directory.appendingPathComponent("session-bus.address")
        let out = open(addressFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(out) }
        sessionBus = try ChildProcess(["/usr/bin/dbus-daemon", "--session", "--nofork", "--print-address=1"], environment: [:],
                                      stdout: out, logPath: directory.appendingPathComponent("session-bus.log").path)
        var address = ""
        for _ in 0..<200 {
            address = ((try? String(contentsOf: addressFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if !address.isEmpty { break }
            usleep(10_000)
        }
        guard !address.isEmpty else { throw HarnessError("the session bus for WirePlumber did not start") }
        sessionBusAddress = address
    }

    var daemonEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        environment["PIPEWIRE_RUNTIME_DIR"] = runtimeDirectory.path
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = sessionBusAddress
        environment.removeValue(forKey: "PIPEWIRE_REMOTE")
        return environment
    }

    /// Starts `/usr/bin/<name>` with `arguments` (logging to `<name>.log`) and waits, at
    /// most 10 s, until it accepts connections at `socket`.
    private func startDaemon(_ name: String, arguments: [String] = [], listeningAt socket: String) async throws {
        let daemon = try ChildProcess(["/usr/bin/\(name)"] + arguments, environment: daemonEnvironment,
                                      logPath: directory.appendingPathComponent("\(name).log").path)
        processes.withLock { $0.append(daemon) }
        let deadline = ContinuousClock.now + .seconds(10)
        while !Self.accepts(socket) {
            guard daemon.isRunning, ContinuousClock.now < deadline else {
                throw HarnessError("\(name) did not start: \(log("\(name).log"))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Starts `pipewire` and `wireplumber` and makes the two devices.
    public func startDaemons() async throws {
        // A daemon killed before leaves its socket behind: until the new one listens there,
        // a client connecting to it is refused. So the old one goes, and the wait is for a
        // daemon that accepts, not for the file.
        let socket = runtimeDirectory.appendingPathComponent("pipewire-0").path
        for stale in [socket, socket + ".lock"] { try? FileManager.default.removeItem(atPath: stale) }
        try await startDaemon("pipewire", arguments: applicationUser == nil ? [] : ["-c", "earshot-head-unit.conf"], listeningAt: socket)
        // The application user may connect (it may do nothing more unless WirePlumber says so).
        if applicationUser != nil { chmod(socket, 0o666) }
        let wireplumber = try ChildProcess(["/usr/bin/wireplumber"],
                                           environment: daemonEnvironment.merging(["EARSHOT_PIPEWIRE_TRUSTED_UIDS": "0"]) { $1 },
                                           logPath: directory.appendingPathComponent("wireplumber.log").path)
        processes.withLock { $0.append(wireplumber) }
        if pulse {
            let server = runtimeDirectory.appendingPathComponent("pulse/native").path
            try? FileManager.default.removeItem(atPath: server)
            try await startDaemon("pipewire-pulse", listeningAt: server)
        }
        try await tool(["pw-cli", "create-node", "adapter",
                        "{ factory.name=support.null-audio-sink node.name=speakers media.class=Audio/Sink object.linger=true audio.position=[FL FR] }"])
        try await tool(["pw-cli", "create-node", "adapter",
                        "{ factory.name=support.null-audio-sink node.name=mic media.class=Audio/Source/Virtual object.linger=true audio.position=[MONO] }"])
        // WirePlumber picks the defaults once it sees the devices.
        let ready = ContinuousClock.now + .seconds(10)
        while true {
            let status = try await tool(["wpctl", "status"])
            if status.contains("speakers"), status.contains("mic"), status.contains("*") { break }
            guard ContinuousClock.now < ready else { throw HarnessError("WirePlumber did not take up the devices:\n\(status)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Whether something accepts connections on the Unix socket at `path`.
    static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Stops the daemons and every stream this system started (SIGKILL: as a crash).
    public func killDaemons() async {
        let all = processes.withLock { processes -> [ChildProcess] in
            defer { processes = [] }
            return processes
        }
        for process in all.reversed() {
            process.signal(SIGKILL)
            _ = await process.waitForExit(timeout: .seconds(5))
        }
    }

    /// Runs a PipeWire tool against this daemon and returns its output.
    @discardableResult
    public func tool(_ arguments: [String], timeout: Duration = .seconds(10)) async throws -> String {
        try await ToolRun.run(["/usr/bin/" + arguments[0]] + arguments.dropFirst(), environment: daemonEnvironment, timeout: timeout)
    }

    /// A sine of `hertz` at `amplitude` (0..1), 48 kHz, `seconds` long, on `channels`
    /// channels, as a WAV file.
    public func tone(hertz: Double, amplitude: Double, seconds: Double, channels: Int = 2) throws -> URL {
        let url = directory.appendingPathComponent("tone-\(Int(hertz))-\(channels).wav")
        let frames = Int(48000 * seconds)
        var samples = [Int16](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            let value = Int16(clamping: Int((amplitude * sin(2 * .pi * hertz * Double(frame) / 48000) * 32767).rounded()))
            for channel in 0..<channels { samples[channels * frame + channel] = value }
        }
        try PCMWaveFile.data(samples: samples, rate: 48000, channels: UInt16(channels)).write(to: url)
        return url
    }

    /// Plays `file` as a stream with `role` (`pw-play --media-role`), until stopped;
    /// `latency` (samples) asks the graph for that quantum.
    /// The environment a program playing to this daemon needs, `extra` added: a PulseAudio
    /// one as well when pipewire-pulse runs.
    public func playerEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        daemonEnvironment.merging(extra) { $1 }
    }

    public func play(_ file: URL, role: String, latency: Int? = nil) throws -> ChildProcess {
        let options = latency.map { ["--latency", String($0)] } ?? []
        let user = try applicationUser.map { try TestUser.commandPrefix($0.name) } ?? []
        let player = try ChildProcess(user + ["/usr/bin/pw-play", "--media-role", role] + options + [file.path], environment: daemonEnvironment,
                                      logPath: directory.appendingPathComponent("pw-play.log").path)
        processes.withLock { $0.append(player) }
        return player
    }

    /// Records what the speakers play (the sink's monitor) into a pipe, as it is played:
    /// 48 kHz mono 16-bit raw samples, asking the graph for a quantum of `latency` samples.
    /// Returns the recorder and the pipe's reading end (the caller closes it).
    public func monitor(latency: Int) throws -> (recorder: ChildProcess, output: Int32) {
        var ends: [Int32] = [0, 0]
        // pipe2 is not visible from Swift: close-on-exec right after (a child spawned in
        // between may hold an end until it execs; the recorder's end of file waits for it).
        guard pipe(&ends) == 0 else { throw HarnessError("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(ends[1]) }
        do {
            let recorder = try ChildProcess(Self.monitorRecorder(channels: 1, options: ["--latency", String(latency)], to: "-"),
                                            environment: daemonEnvironment, stdout: ends[1],
                                            logPath: directory.appendingPathComponent("pw-record.log").path)
            processes.withLock { $0.append(recorder) }
            return (recorder, ends[0])
        } catch {
            close(ends[0])
            throw error
        }
    }

    /// Plays `file` (mono) into the virtual microphone: WirePlumber links playback streams
    /// to sinks only, so the stream starts unlinked and is linked to `mic`'s input here.
    /// Returns once the link is made.
    public func speakIntoMicrophone(_ file: URL) async throws -> ChildProcess {
        let name = "earshot-test-voice"
        let player = try ChildProcess(["/usr/bin/pw-play", "--target", "0", "-P", "{ node.name=\(name) }", file.path],
                                      environment: daemonEnvironment, logPath: directory.appendingPathComponent("pw-play-mic.log").path)
        processes.withLock { $0.append(player) }
        try await tool(["pw-link", try await firstOutputPort(of: name, while: player, log: "pw-play-mic.log"), "mic:input_MONO"])
        return player
    }

    /// `pw-record` of the speakers' monitor, 48 kHz 16-bit on `channels`, into `output`
    /// (a file, or `-` for stdout, raw), with further `options`.
    private static func monitorRecorder(channels: Int, options: [String] = [], to output: String) -> [String] {
        ["/usr/bin/pw-record", "--target", "speakers", "-P", "{ stream.capture.sink=true }", "--rate", "48000",
         "--channels", String(channels), "--format", "s16"] + options + [output]
    }

    /// Records what the speakers play for `seconds` (the sink's monitor) as 48 kHz stereo
    /// 16-bit samples, left channel only.
    public func listen(seconds: Double) async throws -> [Double] {
        let url = directory.appendingPathComponent("monitor-\(UUID().uuidString.prefix(6)).wav")
        _ = try? await ToolRun.run(["/usr/bin/timeout", String(seconds)] + Self.monitorRecorder(channels: 2, to: url.path),
                                   environment: daemonEnvironment, timeout: Duration.seconds(seconds + 10))
        let samples = try PCMWaveFile.samples(of: url)
        try? FileManager.default.removeItem(at: url)
        return stride(from: 0, to: samples.count - 1, by: 2).map { Double(samples[$0]) / 32768 }
    }

    /// The level of a sine of `hertz` in `samples` (48 kHz), in dB relative to a full-scale
    /// sine (Goertzel over the samples, skipping the first `skipping`, by default the 50 ms
    /// while a recorder starts).
    public static func toneLevel<Samples: Collection<Double>>(_ samples: Samples, hertz: Double, skipping: Int = 2400) -> Double {
        let usable = samples.dropFirst(skipping)
        guard usable.count >= 48 else { return -200 }
        let coefficient = 2 * cos(2 * .pi * hertz / 48000)
        var (previous, beforePrevious) = (0.0, 0.0)
        for sample in usable {
            let current = sample + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let amplitude = 2 * sqrt(max(power, 0)) / Double(usable.count)
        return 20 * log10(max(amplitude, 1e-10))
    }

    /// The level of a sine of `hertz` in each `window` samples of `samples` (48 kHz; 240:
    /// 5 ms), in the order heard; a `hertz` with a whole number of cycles per window keeps
    /// other tones out of it.
    public static func toneLevels(_ samples: [Double], hertz: Double, window: Int = 240) -> [Double] {
        stride(from: 0, to: samples.count - window + 1, by: window).map {
            toneLevel(samples[$0 ..< $0 + window], hertz: hertz, skipping: 0)
        }
    }

    /// The RMS level of `samples` in dBFS.
    public static func rmsLevel(_ samples: [Double]) -> Double {
        let usable = samples.dropFirst(2400)
        guard !usable.isEmpty else { return -200 }
        let mean = usable.reduce(0) { $0 + $1 * $1 } / Double(usable.count)
        return 10 * log10(max(mean, 1e-20))
    }

    /// What WirePlumber's restore-stream has stored for playback streams of `role`: the
    /// `volume`, `mute` and `channelVolumes` lines of its state file (it writes the file a
    /// moment after a change), by key ("volume" → "1.0").
    public func storedPlaybackLevels(role: String) -> [String: String] {
        let file = directory.appendingPathComponent("state/wireplumber/restore-stream")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return [:] }
        let prefix = "Output/Audio:media.role:\(role):"
        var levels: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let entry = line.dropFirst(prefix.count).split(separator: "=", maxSplits: 1)
            if entry.count == 2 { levels[String(entry[0])] = String(entry[1]) }
        }
        return levels
    }

    public func log(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
    }

    public func stop() async {
        await killDaemons()
        sessionBus.signal(SIGKILL)
        _ = await sessionBus.waitForExit(timeout: .seconds(5))
        try? FileManager.default.removeItem(at: directory)
    }
}

/// 16-bit PCM WAV files for the tests' tones and recordings.
enum PCMWaveFile {
    static func data(samples: [Int16], rate: UInt32, channels: UInt16) -> Data {
        var data = Data()
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        let bytes = UInt32(samples.count * 2)
        data.append(contentsOf: Array("RIFF".utf8)); append(36 + bytes)
        data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(channels)
        append(rate); append(rate * UInt32(channels) * 2); append(channels * 2); append(UInt16(16))
        data.append(contentsOf: Array("data".utf8)); append(bytes)
        samples.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// The samples of a 16-bit WAV file's `data` chunk (a recorder killed mid-way leaves
    /// its sizes unset: everything after the chunk header counts).
    static func samples(of url: URL) throws -> [Int16] {
        let bytes = [UInt8](try Data(contentsOf: url))
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(UInt32(bytes[offset + 4]) | UInt32(bytes[offset + 5]) << 8 | UInt32(bytes[offset + 6]) << 16 | UInt32(bytes[offset + 7]) << 24)
            if id == "data" {
                let start = offset + 8
                let end = size == 0 || start + size > bytes.count ? bytes.count : start + size
                return stride(from: start, to: end - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
            }
            offset += 8 + size + (size & 1)
        }
        throw HarnessError("\(url.path) has no data chunk")
    }
}
