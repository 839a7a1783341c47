import ArgumentParser
import ContractCore
import Dispatch
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench alerts`: PresentAlert round-trips with one and with many clients, and the
/// time from an alert becoming current to its first audio frame, next to the espeak-ng
/// command speaking the same words into a file.
struct AlertsBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alerts",
        abstract: "Measure earshot-alerts: \(AlertsContract.Manager.presentAlert.name) round-trips, and the first audio frame against the espeak-ng command.",
        discussion: """
            Needs the release build of earshot-alerts next to this binary \
            (swift build -c release --product earshot-alerts) and /usr/bin/espeak-ng. Starts a \
            private dbus-daemon and one earshot-alerts --output-device speaker --output-pace realtime \
            --linger-seconds 0, where speaker is an ALSA file plugin over null writing to a file in \
            the bus's temporary directory, paced in real time like a live speaker. Then, in one run:

            1. \(AlertsContract.Manager.presentAlert.name) round-trips. The alert is what an HMI would send: Text and Audio \
            [(TEXT, the sentence)], Priority --priority (default NORMAL). After --warmup untimed \
            calls, one client makes --calls calls in sequence; then --clients clients, each its \
            own connection, make --calls-per-client calls each, all at once. Reported: p50, p99, \
            mean and max of the round-trip (call sent to reply received) and replies per second \
            over the phase's wall time. The rate limits (NORMAL: 4 per owner in 60 s) and the \
            16-slot queue reject most calls; that is realistic, and the reply carries the alert's \
            object path either way, so the round-trip is measured the same. An observer \
            connection reads every alert's first Completed, so each call is counted as accepted \
            (queued or presented) or by its rejection reason, and the round-trips are also shown \
            split that way. Every phase uses fresh connections (fresh owners, fresh rate windows) \
            and starts with an empty queue: when a phase ends its clients leave, which ends their \
            alerts (owner-vanished), and the next phase waits until \(AlertsContract.Manager.queueLength.name) is 0.

            2. First audio frame. --speech-runs alerts, one after another, each \
            Speak([(TEXT, the sentence)], {}) from a fresh connection (so NORMAL's rate limit never \
            applies); the next starts after the previous one's Completed (which comes when its audio \
            has played, in real time). The figure is the service's own: its log line \
            "alert N: first audio frame written X ms after presentation", from the alert becoming \
            current (its audio output asked to play) to the first frame written to the ALSA PCM; \
            it covers opening the PCM and synthesizing the sentence with libespeak-ng. Goal: \
            under 150 ms, judged at p99 (reported, not enforced). The first --speech-warmup runs \
            are not counted.

            3. The espeak-ng command. After each of those alerts (never while one plays), \
            /usr/bin/espeak-ng -w FILE.wav "the sentence" runs once; its wall time from posix_spawn \
            to waitpid is recorded: process start, voice loading, synthesis and the file. \
            Reported: its p50 and p99, and the ratio of the service's first-frame p50 to it.

            A default run takes about a minute.
            """)

    @Option(help: "Untimed \(AlertsContract.Manager.presentAlert.name) calls before the measured ones.")
    var warmup = 200

    @Option(help: "\(AlertsContract.Manager.presentAlert.name) calls of the single client.")
    var calls = 2000

    @Option(help: "Concurrent clients of the second round-trip phase, each its own connection.")
    var clients = 100

    @Option(help: "\(AlertsContract.Manager.presentAlert.name) calls of each concurrent client.")
    var callsPerClient = 20

    @Option(help: ArgumentHelp("Priority of the presented alerts.", valueName: "priority"))
    var priority = "NORMAL"

    @Option(help: "Measured Speak alerts (and espeak-ng command runs).")
    var speechRuns = 20

    @Option(help: "Speak alerts and espeak-ng runs before the measured ones.")
    var speechWarmup = 2

    @Option(help: "The words spoken and shown.")
    var sentence = "Please fasten your seat belt"

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard warmup >= 0 else { throw ValidationError("--warmup must not be negative") }
        guard calls >= 1 else { throw ValidationError("--calls must be at least 1") }
        guard (1...500).contains(clients) else { throw ValidationError("--clients must be 1...500") }
        guard callsPerClient >= 1 else { throw ValidationError("--calls-per-client must be at least 1") }
        guard ["NORMAL", "COMMUNICATION", "NAVIGATION", "VOICECOM", "EMERGENCY"].contains(priority) else {
            throw ValidationError("--priority must be NORMAL, COMMUNICATION, NAVIGATION, VOICECOM or EMERGENCY")
        }
        guard speechRuns >= 1 else { throw ValidationError("--speech-runs must be at least 1") }
        guard speechWarmup >= 0 else { throw ValidationError("--speech-warmup must not be negative") }
        guard !sentence.isEmpty, sentence.count <= 500 else { throw ValidationError("--sentence must be 1...500 characters") }
    }

    func run() async throws {
        let benchmark = AlertsBenchmark(warmup: warmup, calls: calls, clients: clients, callsPerClient: callsPerClient,
                                        priority: priority, speechRuns: speechRuns, speechWarmup: speechWarmup, sentence: sentence)
        let results = try await runInterruptibly(interrupted: "the bus, the service and the temporary files are gone") { try await benchmark.run() }
        try results.print(json: json)
    }
}

/// One benchmark run: the bus, the speaker, the service, the phases, the figures.
struct AlertsBenchmark: Sendable {
    let warmup: Int
    let calls: Int
    let clients: Int
    let callsPerClient: Int
    let priority: String
    let speechRuns: Int
    let speechWarmup: Int
    let sentence: String

    static let busName = AlertsContract.busName
    static let alertInterface = AlertsContract.Alert.interface.name
    static let espeak = "/usr/bin/espeak-ng"
    static let outputPace = "realtime"
    static let outputRate: UInt32 = 22050

    func run() async throws -> AlertsBenchmarkResults {
        let service = try builtService("earshot-alerts")
        guard FileManager.default.isExecutableFile(atPath: Self.espeak) else {
            throw BenchmarkError("\(Self.espeak) is missing: install espeak-ng")
        }
        return try await withPrivateBus { bus in try await measure(service: service, bus: bus) }
    }

    private func measure(service path: String, bus: PrivateBus) async throws -> AlertsBenchmarkResults {
        let speakerFile = bus.directory.appendingPathComponent("speaker.raw")
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        devices.speaker("speaker", outfile: speakerFile)
        try devices.write()
        let arguments = ["--output-device", "speaker", "--output-pace", Self.outputPace, "--output-rate", String(Self.outputRate),
                         "--linger-seconds", "0"]
        progress("starting earshot-alerts \(arguments.joined(separator: " "))")
        let service = try await ServiceProcess(path, arguments: arguments, bus: bus, busName: Self.busName,
                                               environment: devices.environment)
        let manager = try await bus.connect()
        defer { manager.close() }
        let completions = try await AlertCompletions(observer: manager, busName: Self.busName, interface: Self.alertInterface)
        defer { completions.stop() }

        do {
            try await warmUp(calls: warmup, bus: bus, manager: manager)
            var roundTrips: [AlertRoundTripResult] = []
            roundTrips.append(try await self.roundTrips(clients: 1, callsPerClient: calls, bus: bus, manager: manager,
                                                        completions: completions))
            try Task.checkCancellation()
            roundTrips.append(try await self.roundTrips(clients: clients, callsPerClient: callsPerClient, bus: bus, manager: manager,
                                                        completions: completions))
            try Task.checkCancellation()
            let firstFrame = try await firstFrames(bus: bus, service: service, completions: completions, speakerFile: speakerFile)
            let memory = try? ProcessSample.take(service.pid)
            guard service.isRunning else { throw BenchmarkError("earshot-alerts exited during the run:\n\(service.logText)") }
            await service.shutdown()
            return AlertsBenchmarkResults(processors: ProcessInfo.processInfo.activeProcessorCount, priority: priority,
                                          alertText: sentence, warmupCalls: warmup, roundTrips: roundTrips,
                                          firstFrame: firstFrame, serviceRssKiB: memory?.rssKiB, serviceHwmKiB: memory?.hwmKiB)
        } catch {
            if !service.isRunning {
                progress("earshot-alerts exited; its log:\n\(service.logText.split(separator: "\n").suffix(20).joined(separator: "\n"))")
            }
            await service.shutdown()
            throw error
        }
    }

    // MARK: First audio frame

    private func firstFrames(bus: PrivateBus, service: ServiceProcess, completions: AlertCompletions,
                             speakerFile: URL) async throws -> FirstFrameResult {
        let wav = bus.directory.appendingPathComponent("espeak-ng.wav").path
        let command = [Self.espeak, "-w", wav, sentence]
        var firstFrame: [Double] = [], espeak: [Double] = [], roundTrip: [Double] = [], toCompleted: [Double] = []
        var missing = 0, espeakFailures = 0
        var codes: [String: Int] = [:]
        var audioBytes: UInt64 = 0
        let chunks: [SpeechChunk] = [.text(sentence)]
        progress("\(speechWarmup) + \(speechRuns) Speak alerts, each followed by one espeak-ng command run")
        for run in 0..<(speechWarmup + speechRuns) {
            try Task.checkCancellation()
            let measured = run >= speechWarmup
            let caller = try await bus.connect()
            let start = monotonicNanoseconds()
            let path = try await AlertsProxy(connection: caller).submit(speaking: chunks).path
            let replied = monotonicNanoseconds()
            guard let id = path.rawValue.split(separator: "/").last.map(String.init) else {
                caller.close()
                throw BenchmarkError("Speak gave the alert \(path)")
            }
            let completion = try await completions.wait(for: path, timeout: .seconds(60))
            caller.close()
            guard let completion else { throw BenchmarkError("no Completed from \(path) within 60 s") }
            let logged = try await Self.firstFrameLogged(alert: id, service: service, timeout: .seconds(2))

            let outcome = try await TimedCommand.run(command)
            guard measured else { continue }
            codes[completion.resultCode, default: 0] += 1
            roundTrip.append(Double(replied - start) / 1e6)
            toCompleted.append(Double(completion.arrivedNanoseconds &- start) / 1e6)
            if let logged { firstFrame.append(logged) } else { missing += 1 }
            // The file plugin truncates its file when a PCM opens it, and every alert opens
            // its own: what the file holds now is this alert's audio.
            audioBytes += Self.fileSize(speakerFile)
            if outcome.status == 0 { espeak.append(Double(outcome.nanoseconds) / 1e6) } else { espeakFailures += 1 }
        }
        return FirstFrameResult(sentence: sentence, runs: speechRuns, warmupRuns: speechWarmup, outputDevice: "speaker",
                                outputPace: Self.outputPace, outputRate: Self.outputRate, firstFrameMilliseconds: firstFrame,
                                firstFrame: Figures(firstFrame), missingFirstFrame: missing, resultCodes: codes,
                                speakRoundTrip: Figures(roundTrip), speakToCompleted: Figures(toCompleted),
                                audioSecondsWritten: Double(audioBytes) / Double(Self.outputRate * 2), espeakCommand: command,
                                espeakMilliseconds: espeak, espeak: Figures(espeak), espeakFailures: espeakFailures)
    }

    /// X of the service's `alert N: first audio frame written X ms after presentation`,
    /// once it is in the log; nil if it does not appear within `timeout`.
    static func firstFrameLogged(alert id: String, service: ServiceProcess, timeout: Duration) async throws -> Double? {
        let marker = "alert \(id): first audio frame written "
        let deadline = ContinuousClock.now + timeout
        while true {
            let log = service.logText
            if let range = log.range(of: marker) {
                let rest = log[range.upperBound...]
                if let end = rest.range(of: " ms"), let value = Double(rest[..<end.lowerBound]) { return value }
            }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func fileSize(_ url: URL) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }
}
