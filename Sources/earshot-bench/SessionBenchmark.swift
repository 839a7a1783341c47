import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation

/// `earshot-bench session`: SetDesiredState and GetState round-trips, and how long a
/// route change takes from the ALSA configuration edit to the `RouteChanged` signal.
struct SessionBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Measure earshot-session: \(SessionContract.Manager.setDesiredState.name) and \(SessionContract.Manager.getState.name) round-trips, and route-change detection.",
        discussion: """
            Needs the release build of earshot-session next to this binary \
            (swift build -c release --product earshot-session). Starts a private dbus-daemon and \
            one earshot-session with its state file in the bus's temporary directory, and an ALSA \
            configuration (ALSA_CONFIG_PATH) with two file-plugin microphones, mono_mic (1 channel) \
            and stereo_mic (2 channels). Then, in one run:

            1. \(SessionContract.Manager.setDesiredState.name) round-trips, one client, one call after another, alternating \
            between {record, mono_mic, 16000 Hz, 0.02 s} and {playAndRecord + defaultToSpeaker, \
            voiceChat, stereo_mic, stereo, 48000 Hz, 0.01 s}. Each call validates, saves the state \
            file (written, fsynced, renamed) and applies every step on ALSA (the input opened and \
            configured to read the granted rate and period back) before it replies.

            2. \(SessionContract.Manager.getState.name) round-trips, one client.

            3. Route-change detection: --route-changes times, the ALSA configuration file is \
            rewritten (a new file renamed over it, as editors do) alternately with and without a \
            third microphone, hotplug_mic; the time from just before the rewrite to the \
            \(SessionContract.Manager.routeChanged.name) signal's arrival at the client is recorded (inotify, a 30 ms settling \
            time, the rescan and probe of every input, the signal). Goal: p50 under 500 ms \
            (reported, not enforced).

            A default run takes about 20 seconds.
            """)

    @Option(help: "Untimed calls of each kind before the measured ones.")
    var warmup = 100

    @Option(help: "Measured \(SessionContract.Manager.setDesiredState.name) calls.")
    var setCalls = 1000

    @Option(help: "Measured \(SessionContract.Manager.getState.name) calls.")
    var getCalls = 5000

    @Option(help: "Measured route changes.")
    var routeChanges = 40

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard warmup >= 0 else { throw ValidationError("--warmup must not be negative") }
        guard setCalls >= 1, getCalls >= 1, routeChanges >= 1 else {
            throw ValidationError("--set-calls, --get-calls and --route-changes must be at least 1")
        }
    }

    func run() async throws {
        let benchmark = SessionBenchmark(warmup: warmup, setCalls: setCalls, getCalls: getCalls, routeChanges: routeChanges)
        let results = try await runInterruptibly(interrupted: "the bus, the service and the temporary files are gone") { try await benchmark.run() }
        try results.print(json: json)
    }
}

struct SessionBenchmark: Sendable {
    let warmup: Int
    let setCalls: Int
    let getCalls: Int
    let routeChanges: Int

    static let busName = SessionContract.busName
    static let path = ObjectPath(declared: SessionContract.managerPath)
    static let routeGoalMilliseconds = 500.0

    static let states: [DesiredSessionState] = {
        var record = DesiredSessionState(category: "record")
        record.preferredInput = "mono_mic"
        record.sampleRate = 16000
        record.ioBufferDuration = 0.02
        var voiceChat = DesiredSessionState(category: "playAndRecord", options: ["defaultToSpeaker"])
        voiceChat.mode = "voiceChat"
        voiceChat.preferredInput = "stereo_mic"
        voiceChat.polarPattern = "stereo"
        voiceChat.sampleRate = 48000
        voiceChat.ioBufferDuration = 0.01
        return [record, voiceChat]
    }()

    func run() async throws -> SessionBenchmarkResults {
        let service = try builtService("earshot-session")
        return try await withPrivateBus { bus in try await measure(service: service, bus: bus) }
    }

    private func devices(_ bus: PrivateBus, hotplug: Bool) -> ALSATestDevices {
        let input = bus.directory.appendingPathComponent("microphone.raw")
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.microphone("mono_mic", infile: input, channels: 1)
        devices.microphone("stereo_mic", infile: input, channels: 2)
        if hotplug { devices.microphone("hotplug_mic", infile: input, channels: 1) }
        return devices
    }

    private func measure(service path: String, bus: PrivateBus) async throws -> SessionBenchmarkResults {
        try Data(count: 65536).write(to: bus.directory.appendingPathComponent("microphone.raw"))
        try devices(bus, hotplug: false).write()
        let arguments = ["--state-file", bus.directory.appendingPathComponent("session.json").path]
        progress("starting earshot-session \(arguments.joined(separator: " "))")
        let service = try await ServiceProcess(path, arguments: arguments, bus: bus, busName: Self.busName,
                                               environment: devices(bus, hotplug: false).environment)
        let client = try await bus.connect()
        defer { client.close() }
        let session = Earshot(connection: client).session
        do {
            progress("\(warmup) + \(setCalls) \(SessionContract.Manager.setDesiredState.name) calls")
            var index = 0
            let set = try await timed(warmup: warmup, count: setCalls) {
                index += 1
                try await session.setDesiredState(Self.states[index % 2])
            }
            progress("\(warmup) + \(getCalls) \(SessionContract.Manager.getState.name) calls")
            let get = try await timed(warmup: warmup, count: getCalls) {
                _ = try await session.state()
            }
            progress("\(routeChanges) route changes")
            let routes = try await routeChangeTimes(bus: bus, client: client)
            let memory = try? ProcessSample.take(service.pid)
            guard service.isRunning else { throw BenchmarkError("earshot-session exited during the run:\n\(service.logText)") }
            await service.shutdown()
            return SessionBenchmarkResults(processors: ProcessInfo.processInfo.activeProcessorCount, warmupCalls: warmup,
                                           setDesiredState: Figures(set), getState: Figures(get), routeChange: Figures(routes.times),
                                           routeChangeReasons: routes.reasons, serviceRssKiB: memory?.rssKiB)
        } catch {
            if !service.isRunning {
                progress("earshot-session exited; its log:\n\(service.logText.split(separator: "\n").suffix(20).joined(separator: "\n"))")
            }
            await service.shutdown()
            throw error
        }
    }

    /// Round-trip times of `count` calls after `warmup` untimed ones, in microseconds.
    private func timed(warmup: Int, count: Int, _ call: () async throws -> Void) async throws -> [Double] {
        for _ in 0..<warmup { try await call() }
        var times: [Double] = []
        times.reserveCapacity(count)
        for _ in 0..<count {
            try Task.checkCancellation()
            let start = monotonicNanoseconds()
            try await call()
            times.append(Double(monotonicNanoseconds() - start) / 1000)
        }
        return times
    }

    /// Milliseconds from each configuration rewrite to its `RouteChanged`, as EarshotClient's
    /// `SessionProxy.events()` yields it to an application.
    private func routeChangeTimes(bus: PrivateBus, client: DBusConnection) async throws -> (times: [Double], reasons: [String: Int]) {
        let events = DatedArrivals(try await SessionProxy(connection: client).events())
        var times: [Double] = []
        var reasons: [String: Int] = [:]
        for change in 0..<routeChanges {
            try Task.checkCancellation()
            let devices = devices(bus, hotplug: change % 2 == 0)
            let start = monotonicNanoseconds()
            try devices.write()
            var change: (reason: String, arrived: UInt64)?
            while change == nil, let next = await events.next(within: .seconds(10)) {
                if case .routeChanged(let reason, _) = next.element { change = (reason, next.arrivedNanoseconds) }
            }
            guard let change else { throw BenchmarkError("no route change within 10 s of rewriting the ALSA configuration") }
            times.append(Double(change.arrived - start) / 1_000_000)
            reasons[change.reason, default: 0] += 1
            try await Task.sleep(for: .milliseconds(100))  // let the re-apply finish before the next edit
        }
        return (times, reasons)
    }
}

struct SessionBenchmarkResults: BenchmarkReport, Sendable {
    let processors: Int
    let warmupCalls: Int
    /// Microseconds.
    let setDesiredState: Figures
    /// Microseconds.
    let getState: Figures
    /// Milliseconds from the configuration edit to RouteChanged.
    let routeChange: Figures
    let routeChangeReasons: [String: Int]
    let serviceRssKiB: UInt64?

    var routeGoalMet: Bool { routeChange.p50 < SessionBenchmark.routeGoalMilliseconds }

    func table() -> String {
        let widths = [-22, 9, 10, 10, 10, 10, 10]
        var lines: [String] = []
        lines.append("earshot-session on a private bus, \(processors) processors; \(warmupCalls) warm-up calls of each kind first")
        lines.append(TableFormat.row(["", "samples", "p50", "p99", "mean", "max", "per s"], widths: widths))
        for (name, figures) in [("\(SessionContract.Manager.setDesiredState.name) (µs)", setDesiredState), ("\(SessionContract.Manager.getState.name) (µs)", getState)] {
            lines.append(TableFormat.row([name, String(figures.samples), TableFormat.fixed(figures.p50, 0),
                                          TableFormat.fixed(figures.p99, 0), TableFormat.fixed(figures.mean, 0),
                                          TableFormat.fixed(figures.max, 0), TableFormat.fixed(1_000_000 / figures.mean, 0)],
                                         widths: widths))
        }
        lines.append(TableFormat.row(["route change (ms)", String(routeChange.samples), TableFormat.fixed(routeChange.p50, 1),
                                      TableFormat.fixed(routeChange.p99, 1), TableFormat.fixed(routeChange.mean, 1),
                                      TableFormat.fixed(routeChange.max, 1), ""], widths: widths))
        let reasons = routeChangeReasons.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("route changes: configuration rewritten → \(SessionContract.Manager.routeChanged.name) received (\(reasons))")
        lines.append("goal: route-change p50 under \(Int(SessionBenchmark.routeGoalMilliseconds)) ms: \(routeGoalMet ? "met" : "NOT met")")
        if let serviceRssKiB { lines.append("earshot-session RSS after the run: \(serviceRssKiB) KiB") }
        return lines.joined(separator: "\n")
    }
}
