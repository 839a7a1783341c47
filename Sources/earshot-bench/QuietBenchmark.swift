import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench quiet`: the first call after a quiet spell, when the services have let go
/// of what they keep for work, against the same call made again straight after.
struct QuietBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quiet",
        abstract: "Measure the first calls after a quiet spell against the same calls warm.",
        discussion: """
            Needs the release builds of earshot-alerts, earshot-pieces and earshot-capture next \
            to this binary (./deploy/earshot-dev bench quiet builds them). Starts a private \
            dbus-daemon with the three services as a head unit runs them: alerts speaking to a \
            speaker paced in real time (an ALSA file plugin over null), capture reading a \
            microphone paced in real time (the file plugin with infile), pieces with a store in \
            the bus's temporary directory. Each client call goes through EarshotClient.

            Each of --rounds rounds waits --quiet-seconds without any call, then makes, in this \
            order, each call once after the quiet spell and once again at once (warm):

            1. \(AlertsContract.Manager.presentAlert.name) with speech [(TEXT, --sentence)], awaited to its Completed. The figure \
            is the call's round trip plus the service's own "first audio frame written X ms after \
            presentation" (its log): an upper bound on the time from the call to the first frame \
            written to the ALSA PCM, since the alert is presented before its reply is sent. Goal \
            after quiet: under 150 ms.

            2. Drop of a 10 MiB 16-bit stereo WAV (new content each time), over a file \
            descriptor: the call's round trip. Goal: within 2x of warm.

            3. \(CaptureContract.Manager.performAudioPassThru.name) (16 kHz, 16 bit, \(CaptureContract.Manager.Keys.muteAudio.name) false, \(CaptureContract.Manager.Keys.chunkMs.name) --chunk-ms): from \
            the call to its first \(CaptureContract.PassThru.audioPassThru.name) chunk received, and that less \(CaptureContract.Manager.Keys.chunkMs.name) (what capture \
            adds to the chunk's own audio, which a microphone paced in real time takes \(CaptureContract.Manager.Keys.chunkMs.name) to \
            give); then End. Goal: both within 2x of warm.

            Before the round's first calls it checks that the services have let go: no \
            speech helper (earshot-speak) left by earshot-alerts and no libsndfile mapped in earshot-pieces \
            (they go 10 to 30 s after the last call); a shorter quiet spell is refused there. \
            After that the services are left alone, so a spell of 40 s finds them as 10 minutes \
            would; what a longer spell adds on a head unit is the kernel reclaiming page cache \
            under memory pressure: --drop-caches (as root) drops the clean page cache before the \
            calls, which takes the libraries and data the services closed, and the 10 MiB files \
            are written after that, as a recording just made would be.

            Reported for each call: p50, p99, mean and max after quiet and warm, their ratios, \
            and each service's VmRSS 2 s after its start (before any call), after the last quiet \
            spell and after its calls. A default run \
            (20 rounds of 10 minutes) takes about 3 h 25 min; --quiet-seconds 40 takes about 16 min.
            """)

    @Option(help: "Rounds, each a quiet spell and then the calls.")
    var rounds = 20

    @Option(help: "Seconds without any call before each round's first calls.")
    var quietSeconds = 600

    @Flag(help: "Drop the kernel's clean page cache after each quiet spell (needs root).")
    var dropCaches = false

    @Option(help: "The words spoken.")
    var sentence = "Please fasten your seat belt"

    @Option(help: "The pass-thru's \(CaptureContract.Manager.Keys.chunkMs.name).")
    var chunkMs: UInt32 = 100

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        guard quietSeconds >= 1 else { throw ValidationError("--quiet-seconds must be at least 1") }
        guard !sentence.isEmpty, sentence.count <= 500 else { throw ValidationError("--sentence must be 1...500 characters") }
        guard (10...1000).contains(chunkMs) else { throw ValidationError("--chunk-ms must be 10...1000") }
        if dropCaches, geteuid() != 0 { throw ValidationError("--drop-caches needs root (it writes /proc/sys/vm/drop_caches)") }
    }

    func run() async throws {
        let benchmark = QuietBenchmark(rounds: rounds, quiet: .seconds(quietSeconds), dropCaches: dropCaches, sentence: sentence,
                                       chunkMs: chunkMs)
        let results = try await runInterruptibly(interrupted: "the bus, the services and the temporary files are gone") {
            try await benchmark.run()
        }
        try results.print(json: json)
    }
}

/// One run: the bus, the devices, the three services, the rounds.
struct QuietBenchmark: Sendable {
    let rounds: Int
    let quiet: Duration
    let dropCaches: Bool
    let sentence: String
    let chunkMs: UInt32

    static let outputRate: UInt32 = 22050
    /// What each service lets go of once quiet: a library, by the name its mapping carries,
    /// or a helper process, by its command.
    static let released: [(service: String, what: Released)] = [("earshot-alerts", .helper("earshot-speak")),
                                                                 ("earshot-pieces", .library("libsndfile"))]
    enum Released: CustomStringConvertible {
        case library(String), helper(String)
        var description: String {
            switch self {
            case .library(let name): "maps \(name)"
            case .helper(let command): "has its \(command) process"
            }
        }
        func held(by service: ServiceProcess) -> Bool {
            switch self {
            case .library(let name): QuietBenchmark.maps(service.pid, name)
            case .helper(let command): !service.children(named: command).isEmpty
            }
        }
    }
    static let dropBytes = 10 * 1024 * 1024 - 44

    func run() async throws -> QuietResults {
        let paths = try ["earshot-alerts", "earshot-pieces", "earshot-capture"].map(builtService)
        return try await withPrivateBus { bus in try await measure(alerts: paths[0], pieces: paths[1], capture: paths[2], bus: bus) }
    }

    private func measure(alerts alertsPath: String, pieces piecesPath: String, capture capturePath: String,
                         bus: PrivateBus) async throws -> QuietResults {
        let microphone = bus.directory.appendingPathComponent("microphone.raw")
        try Data(CaptureBenchmark.noise(16000 * 2 * 10)).write(to: microphone)
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.speaker("speaker", outfile: bus.directory.appendingPathComponent("speaker.raw"))
        devices.microphone("mic", infile: microphone, channels: 1)
        try devices.write()
        let launches: [(String, [String])] = [
            (alertsPath, ["--output-device", "speaker", "--output-pace", "realtime", "--output-rate", String(Self.outputRate),
                          "--linger-seconds", "0"]),
            (piecesPath, ["--data-dir", bus.directory.appendingPathComponent("store").path]),
            (capturePath, ["--device", "mic", "--pace", "realtime", "--linger-seconds", "0"]),
        ]
        var services: [String: ServiceProcess] = [:]
        func stopAll() async { for service in services.values { await service.shutdown() } }
        do {
            for (path, arguments) in launches {
                let name = URL(fileURLWithPath: path).lastPathComponent
                let busName = ServiceStack.services.first { $0.executable == name }!.busName
                progress("starting \(name) \(arguments.joined(separator: " "))")
                services[name] = try await ServiceProcess(path, arguments: arguments, bus: bus, busName: busName,
                                                          environment: devices.environment)
            }
            let connection = try await bus.connect()
            defer { connection.close() }
            let earshot = Earshot(connection: connection)
            var calls = QuietResults.Calls()
            var quietRss: [String: UInt64] = [:]
            // Each service's VmRSS 2 s after its start, before any call.
            try await Task.sleep(for: .seconds(2))
            let idleRss = services.mapValues { (try? ProcessSample.take($0.pid))?.rssKiB ?? 0 }
            // Once without measuring: each service has served its calls once before the
            // first quiet spell, as on a head unit that has been in use.
            progress("one untimed round of the calls")
            _ = try await round(earshot, services: services, bus: bus, index: 0)
            for index in 1...rounds {
                try Task.checkCancellation()
                progress("round \(index) of \(rounds): \(quiet) without calls\(dropCaches ? ", then the page cache dropped" : "")")
                try await Task.sleep(for: quiet)
                if dropCaches { try Self.dropPageCache() }
                for (name, what) in Self.released {
                    guard let service = services[name], !what.held(by: service) else {
                        throw BenchmarkError("\(name) still \(what) after \(quiet) without calls: the spell is shorter "
                                             + "than the service's release (use --quiet-seconds 40 or more)")
                    }
                }
                quietRss = services.mapValues { (try? ProcessSample.take($0.pid))?.rssKiB ?? 0 }
                let measured = try await round(earshot, services: services, bus: bus, index: index)
                calls.append(measured, chunkMs: chunkMs)
            }
            // Memory as the last round left it.
            let memory = Dictionary(uniqueKeysWithValues: services.map { name, service in
                (name, QuietResults.Memory(idleKiB: idleRss[name] ?? 0, afterQuietKiB: quietRss[name] ?? 0,
                                           afterCallsKiB: (try? ProcessSample.take(service.pid))?.rssKiB ?? 0))
            })
            for (name, service) in services where !service.isRunning {
                throw BenchmarkError("\(name) exited during the run:\n\(service.logText.suffix(2000))")
            }
            await stopAll()
            return QuietResults(processors: ProcessInfo.processInfo.activeProcessorCount, rounds: rounds,
                                quietSeconds: Double(quiet.components.seconds), droppedPageCache: dropCaches, sentence: sentence,
                                chunkMs: chunkMs, calls: calls, memory: memory)
        } catch {
            for (name, service) in services where !service.isRunning {
                progress("\(name) exited; its log:\n\(service.logText.split(separator: "\n").suffix(20).joined(separator: "\n"))")
            }
            await stopAll()
            throw error
        }
    }

    /// Each call after quiet, then again warm, in ms.
    private func round(_ earshot: Earshot, services: [String: ServiceProcess], bus: PrivateBus,
                       index: Int) async throws -> QuietResults.Round {
        let files = try (0..<2).map { copy in
            let file = bus.directory.appendingPathComponent("drop-\(index)-\(copy).wav")
            try PiecesBenchmark.writeWAV(file, dataBytes: Self.dropBytes, seed: 1000 + index * 2 + copy)
            return file
        }
        defer { for file in files { unlink(file.path) } }
        let alerts = services["earshot-alerts"]!
        let alertQuiet = try await firstAudio(earshot.alerts, service: alerts)
        let alertWarm = try await firstAudio(earshot.alerts, service: alerts)
        let dropQuiet = try await drop(earshot.pieces, file: files[0], title: "Quiet \(index)")
        let dropWarm = try await drop(earshot.pieces, file: files[1], title: "Warm \(index)")
        let chunkQuiet = try await firstChunk(earshot.capture)
        let chunkWarm = try await firstChunk(earshot.capture)
        return QuietResults.Round(alert: (alertQuiet, alertWarm), drop: (dropQuiet, dropWarm), firstChunk: (chunkQuiet, chunkWarm))
    }

    /// PresentAlert with speech: round trip + the service's presentation → first frame.
    private func firstAudio(_ alerts: AlertsProxy, service: ServiceProcess) async throws -> QuietResults.AlertTiming {
        let start = monotonicNanoseconds()
        let alert = try await alerts.show(Alert(audio: [.text(sentence)]))
        let roundTrip = Double(monotonicNanoseconds() - start) / 1e6
        let result = try await alert.result
        guard result.success else { throw BenchmarkError("the spoken alert ended \(result.resultCode) (\(result.reason?.rawValue ?? ""))") }
        guard let id = alert.path.rawValue.split(separator: "/").last,
              let firstFrame = try await AlertsBenchmark.firstFrameLogged(alert: String(id), service: service, timeout: .seconds(2)) else {
            throw BenchmarkError("earshot-alerts logged no first audio frame for \(alert.path)")
        }
        return QuietResults.AlertTiming(roundTrip: roundTrip, presentationToFirstFrame: firstFrame)
    }

    /// A Drop of `file` over a descriptor: its round trip.
    private func drop(_ pieces: PiecesProxy, file: URL, title: String) async throws -> Double {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchmarkError("cannot open \(file.path): \(String(cString: strerror(errno)))") }
        let start = monotonicNanoseconds()
        _ = try await pieces.drop(PieceDrop(title: title, mixStem: .descriptor(UnixFD(taking: fd))))
        return Double(monotonicNanoseconds() - start) / 1e6
    }

    /// A pass-thru from the call to its first chunk; then ended.
    private func firstChunk(_ capture: CaptureProxy) async throws -> Double {
        var request = AudioPassThruRequest(maxDurationMs: 5000)
        request.muteAudio = false
        request.chunkMs = chunkMs
        let start = monotonicNanoseconds()
        let passThru = try await capture.perform(request)
        var first: UInt64?
        for await _ in passThru {
            first = monotonicNanoseconds()
            break
        }
        try await passThru.end()
        let result = try await passThru.result
        guard let first, result.framesCaptured > 0 else {
            throw BenchmarkError("the pass-thru ended \(result.resultCode) (\(result.reason)) without a chunk")
        }
        return Double(first - start) / 1e6
    }

    /// Whether `pid` maps a file whose name contains `library`.
    static func maps(_ pid: pid_t, _ library: String) -> Bool {
        ((try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)) ?? "").contains("/" + library)
    }

    /// Drops the clean page cache (what is mapped stays), as reclaim under memory pressure would.
    static func dropPageCache() throws {
        sync()
        let fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchmarkError("cannot open /proc/sys/vm/drop_caches: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        guard write(fd, "1\n", 2) == 2 else { throw BenchmarkError("cannot drop the page cache: \(String(cString: strerror(errno)))") }
    }
}
