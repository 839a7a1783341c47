import ArgumentParser
import Dispatch
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench capture`: chunk latency of earshot-capture, and its CPU and memory next
/// to arecord's, on a private bus with live test microphones (`LiveMicrophone`).
struct CaptureBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Measure earshot-capture: chunk latency, gaps, CPU and memory against arecord.",
        discussion: """
            Needs the release builds of earshot-capture and earshot-capture-loop next to this binary \
            (swift build -c release --product earshot-capture, and the same for earshot-capture-loop; \
            ./deploy/earshot-dev bench capture builds both) and /usr/bin/arecord (alsa-utils). \
            Starts a private dbus-daemon and, per configuration, earshot-capture --device mic \
            --pace device on a live test microphone: an ALSA file-plugin PCM whose infile is a FIFO \
            that this benchmark fills in real time, one period at a time, so that every process \
            capturing from it is paced by the device (reads wait for it) and wakes once per period, \
            as on a sound card. Then it runs one \(CaptureContract.Manager.performAudioPassThru.name) \
            of --seconds seconds with a Swift client that records, for every \(CaptureContract.PassThru.audioPassThru.name) chunk, \
            its arrival time minus its monotonicUs, and checks sequence numbers, sizes and bytes:
              (a) 16 kHz mono 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 10
              (b) 16 kHz mono 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 100
              (c) 48 kHz stereo 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 10 (earshot-capture --channels 2)
              (d) 16 kHz mono 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 1000 (the longest chunk)
              (p) 16 kHz mono 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 100, \(CaptureContract.Manager.Keys.noiseSuppression.name) high: (b) with \
            speech processing (WebRTC's, in 10 ms frames on the reading thread); its chunks are not compared with the input, \
            and what it adds to (b)'s p99 is reported
            and, for CPU and memory only, (s) 16 kHz mono 16-bit, \(CaptureContract.Manager.Keys.chunkMs.name) 100, Delivery stream: the \
            audio read from \(CaptureContract.PassThru.openStream.name)'s pipe, with no \(CaptureContract.PassThru.audioPassThru.name) signals; the pipe is read as \
            arecord's are, on a 10 ms tick of the reader's own, so that no write into it wakes a reader. \
            During each 16 kHz mono pass-thru named by --cpu-configurations (default b,d,s) it also runs, \
            each on a live microphone of its own hearing the same input, \
            `arecord -f S16_LE -r 16000 -c 1 -t raw` (its default 125 ms periods) into a pipe read at 32000 B/s, \
            the same with --period-time set to the chunk's length (waking as often as the service), \
            and the C capture loop (earshot-capture-loop, a C program built next to this binary: \
            libasound reads of such a PCM, one libdbus \(CaptureContract.PassThru.audioPassThru.name)-shaped signal per chunk), and \
            compares the CPU time (/proc/PID/stat utime+stime, and the process CPU clock) \
            and memory (VmRSS, VmHWM) of all over the same window. All microphones deliver at \
            fixed times of one clock, chosen so that the processes compared wake apart from one \
            another (12.5, 37.5 and 62.5 ms into every 100 ms, arecord's at multiples of 125 ms). \
            Goals: p99 latency under 2 ms and no gaps in every configuration without processing, and \
            (p)'s p99 less than 2 ms above (b)'s; service CPU within 1.5x of arecord's (its default \
            periods); with signals, within 1.2x of the C capture loop's. They are reported, not \
            enforced. A default run takes about 5-6 minutes.

            --microphone pipewire measures on a device that behaves like hardware instead: a \
            PipeWire daemon and WirePlumber of the benchmark's own (headless, a null sink and a \
            virtual source as the default input), and every process capturing through ALSA's \
            `pipewire` PCM (pipewire-alsa) from that source, whose reads return -EAGAIN between \
            the graph's cycles, as a sound card's do, so the service polls. Only the CPU \
            configurations run there (the audio is the source's, not the benchmark's input, so \
            the bytes are not compared). With --runs N every configuration is measured N times, \
            each with a fresh service and recorders, and the report ends with each CPU ratio's \
            distribution over the runs; the goal is then judged on the median. For the \
            hardware-like figures: --microphone pipewire --runs 10 \
            (about 12 minutes).
            """)

    @Option(help: "Seconds of audio per configuration (\(CaptureContract.Manager.Keys.maxDuration.name) = seconds x 1000), 1...1000.")
    var seconds: Int = 60

    @Option(help: ArgumentHelp("The configurations during which CPU and memory are measured next to arecord, comma-separated: a, b, d, p or s (16 kHz mono 16-bit); default b,d,s (s with --microphone pipewire).",
                               valueName: "labels"))
    var cpuConfigurations: String?

    /// By default b, d and s on live microphones, s alone on PipeWire.
    var cpuLabels: Set<String> {
        Set((cpuConfigurations ?? (microphone == .pipewire ? "s" : "b,d,s")).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    @Flag(help: "Run only the configurations named by --cpu-configurations: a quicker CPU comparison, with no latency figures for the others.")
    var onlyCPU = false

    @Option(help: "live: test microphones fed through FIFOs in real time; pipewire: ALSA's pipewire PCM from a PipeWire virtual source.")
    var microphone: CaptureBenchmark.MicrophoneKind = .live

    @Option(help: "Times each measured configuration is run, each with a fresh service (1...100).")
    var runs = 1

    @Option(help: ArgumentHelp("The earshot-capture to measure (default: the release build next to this binary), to compare two builds.",
                               valueName: "path"))
    var service: String?

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard (1...1000).contains(seconds) else { throw ValidationError("--seconds must be 1...1000") }
        guard (1...100).contains(runs) else { throw ValidationError("--runs must be 1...100") }
        if let service, !FileManager.default.isExecutableFile(atPath: service) { throw ValidationError("--service: \(service) is not an executable") }
        if microphone == .pipewire {
            for tool in ["/usr/bin/pipewire", "/usr/bin/wireplumber"] where !FileManager.default.isExecutableFile(atPath: tool) {
                throw ValidationError("--microphone pipewire needs \(tool) (pipewire, wireplumber and pipewire-alsa)")
            }
        }
        guard cpuLabels.isSubset(of: ["a", "b", "d", "p", "s"]) else { throw ValidationError("--cpu-configurations: each must be a, b, d, p or s") }
        if microphone == .pipewire, cpuLabels != ["s"] {
            throw ValidationError("--microphone pipewire measures the stream alone (--cpu-configurations s): signals are checked against the benchmark's own input")
        }
    }

    func run() async throws {
        let benchmark = CaptureBenchmark(seconds: seconds, cpuLabels: cpuLabels, onlyCPU: onlyCPU || microphone == .pipewire,
                                         microphone: microphone, runs: runs, service: service)
        let results = try await runInterruptibly(interrupted: "the bus, the services, arecord and the temporary files are gone") { try await benchmark.run() }
        try results.print(json: json)
    }
}

/// One pass-thru shape the benchmark measures.
struct CaptureConfiguration: Sendable {
    let label: String
    let samplingRate: UInt32
    let channels: UInt32
    let chunkMs: UInt32
    /// Audio through `OpenStream`'s pipe alone (`Delivery` `stream`), not as signals.
    var streamed = false
    /// With speech processing (`NoiseSuppression` high): its chunks are not the input.
    var processed = false

    static let all = [
        CaptureConfiguration(label: "a", samplingRate: 16000, channels: 1, chunkMs: 10),
        CaptureConfiguration(label: "b", samplingRate: 16000, channels: 1, chunkMs: 100),
        CaptureConfiguration(label: "c", samplingRate: 48000, channels: 2, chunkMs: 10),
        CaptureConfiguration(label: "d", samplingRate: 16000, channels: 1, chunkMs: 1000),
        CaptureConfiguration(label: "p", samplingRate: 16000, channels: 1, chunkMs: 100, processed: true),
    ]
    /// The configuration `p` is measured against: the same shape, no processing.
    static let unprocessedPeer = "b"

    var bytesPerFrame: Int { Int(channels) * 2 }
    /// Bytes of every chunk but a short last one.
    var chunkBytes: Int { Int(samplingRate) * Int(chunkMs) / 1000 * bytesPerFrame }
    /// Measured for CPU and memory only: no signals, so no latency.
    static let stream = CaptureConfiguration(label: "s", samplingRate: 16000, channels: 1, chunkMs: 100, streamed: true)

    var description: String {
        "(\(label)) \(samplingRate / 1000) kHz \(channels == 1 ? "mono" : "stereo") 16-bit, \(chunkMs) ms chunks"
            + (streamed ? ", Delivery stream" : "") + (processed ? ", \(CaptureContract.Manager.Keys.noiseSuppression.name) high" : "")
    }

    func expectedChunks(seconds: Int) -> Int {
        let frames = UInt64(seconds) * UInt64(samplingRate)
        let perChunk = UInt64(samplingRate) * UInt64(chunkMs) / 1000
        return Int((frames + perChunk - 1) / perChunk)
    }
}

/// One benchmark run: the bus, the microphone, the services, the recorder, the figures.
struct CaptureBenchmark: Sendable {
    let seconds: Int
    let cpuLabels: Set<String>
    /// Whether the configurations measured for latency only are left out.
    var onlyCPU = false
    var microphone = MicrophoneKind.live
    var runs = 1
    /// The service binary, when not the one next to this benchmark.
    var service: String?

    /// What the processes capture from.
    enum MicrophoneKind: String, ExpressibleByArgument, Sendable {
        /// File-plugin PCMs over FIFOs that `LiveMicrophone`s fill in real time: reads wait.
        case live
        /// ALSA's `pipewire` PCM from a PipeWire virtual source: reads return -EAGAIN
        /// between the graph's cycles, as a sound card's do.
        case pipewire
    }

    static let busName = CaptureContract.busName
    static let arecord = "/usr/bin/arecord"
    /// Recorder warm-up before the measured pass-thru starts.
    static let recorderWarmUp: Duration = .seconds(1)

    func run() async throws -> CaptureBenchmarkResults {
        let capture = try service ?? builtService("earshot-capture")
        let captureLoop = try builtService("earshot-capture-loop")
        guard FileManager.default.isExecutableFile(atPath: Self.arecord) else {
            throw BenchmarkError("\(Self.arecord) is missing: install alsa-utils")
        }

        guard microphone == .pipewire else {
            return try await withPrivateBus { bus in try await measure(capture: capture, captureLoop: captureLoop, bus: bus, pipeWire: nil) }
        }
        progress("starting PipeWire and WirePlumber (a null sink and a virtual source)")
        let pipeWire = try await PipeWireTestSystem.start()
        do {
            let results = try await withPrivateBus { bus in
                try await measure(capture: capture, captureLoop: captureLoop, bus: bus, pipeWire: pipeWire)
            }
            await pipeWire.stop()
            return results
        } catch {
            await pipeWire.stop()
            throw error
        }
    }

    private func measure(capture: String, captureLoop: String, bus: PrivateBus,
                         pipeWire: PipeWireTestSystem?) async throws -> CaptureBenchmarkResults {
        // The microphones: live ones (LiveMicrophone), one per process that captures, all
        // hearing the same input, long enough for the biggest configuration, with margin;
        // every snd_pcm_open hears it from its beginning.
        let largest = CaptureConfiguration.all.map { $0.samplingRate * $0.channels * 2 }.max() ?? 192_000
        let inputBytes = (seconds + 5) * Int(largest)
        let content = Self.noise(inputBytes)
        var devices = ALSATestDevices(configPath: bus.directory.appendingPathComponent("asound.conf"))
        for microphone in Microphone.allCases {
            if pipeWire != nil {
                devices.pipeWire(microphone.rawValue)
            } else {
                devices.microphone(microphone.rawValue, infile: bus.directory.appendingPathComponent(microphone.rawValue + ".fifo"))
            }
        }
        try devices.write()
        let environment = devices.environment.merging(pipeWire?.environment ?? [:]) { _, new in new }

        var latencies: [ChunkLatencyResult] = []
        var comparisons: [CPUComparison] = []
        let streamed = cpuLabels.contains(CaptureConfiguration.stream.label) ? [CaptureConfiguration.stream] : []
        for run in 1...runs {
            for configuration in CaptureConfiguration.all + streamed where !onlyCPU || cpuLabels.contains(configuration.label) {
                try Task.checkCancellation()
                if runs > 1 { progress("run \(run) of \(runs)") }
                let measuresUsage = cpuLabels.contains(configuration.label)
                let outcome = try await runConfiguration(configuration, capture: capture, captureLoop: captureLoop, bus: bus,
                                                         environment: environment, content: pipeWire == nil ? content : nil,
                                                         measuresUsage: measuresUsage)
                if let latency = outcome.latency { latencies.append(latency) }
                if measuresUsage {
                    comparisons.append(CPUComparison(configuration: configuration.description, chunkMs: configuration.chunkMs,
                                                     usage: outcome.usage, recorder: outcome.recorder, run: run))
                }
            }
        }
        return CaptureBenchmarkResults(seconds: seconds, processors: ProcessInfo.processInfo.activeProcessorCount,
                                       microphone: microphone.rawValue, runs: runs, latencies: latencies, cpu: comparisons)
    }

    private struct Outcome {
        var latency: ChunkLatencyResult?
        var usage: [ProcessUsage] = []
        var recorder: PacedRecorder.Statistics?
    }

    /// The live microphones: one per process that captures, so that each hears the whole
    /// input from its start and is paced by its own device.
    enum Microphone: String, CaseIterable {
        case service = "mic"
        case arecord = "mic-arecord"
        case arecordMatched = "mic-arecord-period"
        case captureLoop = "mic-loop"
    }

    /// arecord's own period when none is given: a quarter of its 500 ms buffer.
    static let arecordDefaultPeriodMs = 125

    /// When in its period each microphone delivers (ns after the microphones' shared
    /// start), so that the processes compared wake apart from one another.
    ///
    /// Two of them woken at the same moment share the two CPUs, dbus-daemon and the caches
    /// for that wake-up, and what that costs falls on one or the other depending on the
    /// order in which their starts happened to fall, the same for every wake-up of a run
    /// (docs/benchmarks.md has the figures). So arecord's microphone delivers at multiples
    /// of 125 ms, and the three with chunk-long periods as far from those as their period
    /// allows (half of the greatest common divisor of the two periods: 12.5 ms for 100 ms
    /// chunks) and spread over the period (25 ms apart for 100 ms chunks). Periods too
    /// short for three such places (chunks of 10 ms) are split in thirds instead.
    static func phaseOffset(_ microphone: Microphone, chunkMs: Int) -> UInt64 {
        func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
        let slot: Int
        switch microphone {
        case .arecord: return 0
        case .service: slot = 0
        case .arecordMatched: slot = 1
        case .captureLoop: slot = 2
        }
        let periodNs = UInt64(chunkMs) * 1_000_000
        let grid = gcd(chunkMs, arecordDefaultPeriodMs)
        let places = chunkMs / grid
        guard places >= 3 else { return periodNs * UInt64(2 * slot + 1) / 6 }
        return UInt64(grid) * 500_000 + UInt64(grid * (slot * places / 3)) * 1_000_000
    }

    /// Where the benchmark's own pipe readers tick (every `PacedRecorder.tickNanoseconds`,
    /// 10 ms; ns after the microphones' start): 1.25 ms from every delivery of the microphones, all of which fall on
    /// multiples of 2.5 ms for 100 ms and 1000 ms chunks.
    static let readerTickOffset: UInt64 = 1_250_000

    /// Starts the live microphones for `configuration`: periods of one chunk (the service
    /// asks for one period per chunk, and so do the C loop and the matched arecord), and
    /// arecord's default period for arecord; each delivers at its `phaseOffset`.
    private func startMicrophones(_ configuration: CaptureConfiguration, bus: PrivateBus, content: [UInt8],
                                  measuresUsage: Bool, epoch: UInt64) throws -> [LiveMicrophone] {
        let bytesPerSecond = Int(configuration.samplingRate) * configuration.bytesPerFrame
        var microphones: [LiveMicrophone] = []
        for microphone in measuresUsage ? Microphone.allCases : [.service] {
            let periodBytes = microphone == .arecord ? bytesPerSecond * Self.arecordDefaultPeriodMs / 1000 : configuration.chunkBytes
            let phase = WakePhase(epochNanoseconds: epoch, offsetNanoseconds: Self.phaseOffset(microphone, chunkMs: Int(configuration.chunkMs)))
            let live = try LiveMicrophone(fifo: bus.directory.appendingPathComponent(microphone.rawValue + ".fifo").path,
                                          content: content, bytesPerSecond: bytesPerSecond, periodBytes: periodBytes, phase: phase)
            live.start()
            microphones.append(live)
        }
        return microphones
    }

    /// One configuration: its own earshot-capture, one pass-thru, and (when `measuresUsage`)
    /// arecord beside it.
    private func runConfiguration(_ configuration: CaptureConfiguration, capture: String, captureLoop: String, bus: PrivateBus,
                                  environment: [String: String], content: [UInt8]?, measuresUsage: Bool) async throws -> Outcome {
        // The moment every periodic thread of the configuration keeps time from.
        let epoch = monotonicNanoseconds()
        // Live microphones when the input is the benchmark's; PipeWire's source runs by itself.
        let microphones = try content.map { try startMicrophones(configuration, bus: bus, content: $0, measuresUsage: measuresUsage, epoch: epoch) } ?? []
        let outcome: Result<Outcome, any Error>
        do {
            outcome = .success(try await measureConfiguration(configuration, capture: capture, captureLoop: captureLoop, epoch: epoch, bus: bus,
                                                              environment: environment, content: content, measuresUsage: measuresUsage))
        } catch {
            outcome = .failure(error)
        }
        for microphone in microphones { await microphone.stop() }
        return try outcome.get()
    }

    private func measureConfiguration(_ configuration: CaptureConfiguration, capture: String, captureLoop: String, epoch: UInt64, bus: PrivateBus,
                                      environment: [String: String], content: [UInt8]?, measuresUsage: Bool) async throws -> Outcome {
        // The microphone paces the service, as a live device does.
        var arguments = ["--device", Microphone.service.rawValue, "--pace", "device"]
        if configuration.channels != 1 { arguments += ["--channels", String(configuration.channels)] }
        progress("\(configuration.description): starting earshot-capture \(arguments.joined(separator: " "))")
        let service = try await ServiceProcess(capture, arguments: arguments, bus: bus, busName: Self.busName,
                                               environment: environment)
        var recorder: PacedRecorder?
        var matchedRecorder: PacedRecorder?
        var loop: ChildProcess?
        do {
            let client = try await bus.connect()
            defer { client.close() }
            var window: UsageWindow?
            if measuresUsage {
                /// arecord on the microphone (with `extra` arguments) into a pipe read at
                /// 32000 B/s (not started yet).
                func arecord(_ microphone: Microphone, _ extra: [String], log: String) -> PacedRecorder {
                    PacedRecorder(arguments: [Self.arecord, "-D", microphone.rawValue, "-f", "S16_LE", "-r", "16000", "-c", "1", "-t", "raw"] + extra,
                                  environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                                  logPath: bus.directory.appendingPathComponent(log).path,
                                  bytesPerSecond: 32000, frameBytes: 2,
                                  tickPhase: WakePhase(epochNanoseconds: epoch, offsetNanoseconds: Self.readerTickOffset))
                }
                let paced = arecord(.arecord, [], log: "arecord.log")
                recorder = paced
                let pid = try await paced.start()
                progress("arecord (pid \(pid)) into a pipe read at 32000 B/s")
                try await paced.waitForData(2, timeout: .seconds(10))
                // arecord again, waking once per chunk as the service does (its own default
                // period is a quarter of its 500 ms buffer): the same work at the same rate.
                let matched = arecord(.arecordMatched, ["--period-time=\(configuration.chunkMs * 1000)"], log: "arecord-matched.log")
                matchedRecorder = matched
                let matchedPid = try await matched.start()
                progress("arecord with \(configuration.chunkMs) ms periods (pid \(matchedPid)) into another pipe; "
                         + "warming up for \(Self.recorderWarmUp)")
                try await matched.waitForData(2, timeout: .seconds(10))
                try await Task.sleep(for: Self.recorderWarmUp)
                // From the first chunk to about half a second before the end: the service is
                // capturing throughout, and none of its threads has ended yet.
                let expected = UInt64(configuration.expectedChunks(seconds: seconds))
                let tail = UInt64(max(1, 500 / Int(configuration.chunkMs)))
                // The C loop sends its chunks to the client, which ignores them (another
                // path and interface); it captures a little longer than the pass-thru.
                let reference = try ChildProcess(
                    [captureLoop, "--address", bus.address, "--device", Microphone.captureLoop.rawValue,
                     "--destination", client.uniqueName, "--paced-by-device",
                     "--rate", "16000", "--channels", "1", "--chunk-ms", String(configuration.chunkMs),
                     "--seconds", String(seconds + 5)],
                    environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
                    logPath: bus.directory.appendingPathComponent("capture-loop.log").path)
                loop = reference
                progress("C capture loop (pid \(reference.pid)) sending one signal per \(configuration.chunkMs) ms chunk")
                window = UsageWindow(processes: [.init(role: "earshot-capture", pid: service.pid),
                                                 .init(role: "arecord", pid: pid),
                                                 .init(role: CPUComparison.matchedArecordRole(configuration.chunkMs), pid: matchedPid),
                                                 .init(role: CPUComparison.captureLoopRole, pid: reference.pid),
                                                 .init(role: "dbus-daemon", pid: bus.pid)],
                                     startSequence: 0, endSequence: expected > tail + 1 ? expected - 1 - tail : expected - 1)
            }
            progress("\(configuration.description): pass-thru of \(seconds) s (pid \(service.pid))")
            var outcome = Outcome(latency: nil)
            if configuration.streamed {
                let bytes = try await streamPassThru(configuration, client: client, service: service, content: content, window: window,
                                                     epoch: epoch)
                progress("\(configuration.description): \(bytes) bytes through the pipe, as captured")
            } else {
                guard let content else { throw BenchmarkError("signal configurations need the benchmark's own input (--microphone live)") }
                let latency = try await passThru(configuration, client: client, service: service, content: content, window: window)
                progress("\(configuration.description): \(latency.chunks) chunks, \(latency.gaps) gaps, p99 \(String(format: "%.3f", latency.p99Milliseconds)) ms")
                outcome.latency = latency
            }
            if let recorder, let window {
                guard recorder.isRunning else {
                    throw BenchmarkError("arecord ended during the measurement (exit \(recorder.statistics.exitStatus.map(String.init) ?? "?")): \(recorder.logText)")
                }
                guard matchedRecorder?.isRunning == true else {
                    throw BenchmarkError("arecord with \(configuration.chunkMs) ms periods ended during the measurement: \(matchedRecorder?.logText ?? "")")
                }
                guard loop?.isRunning == true else {
                    throw BenchmarkError("the C capture loop ended during the measurement: "
                                         + ((try? String(contentsOfFile: bus.directory.appendingPathComponent("capture-loop.log").path,
                                                         encoding: .utf8)) ?? ""))
                }
                outcome.usage = try window.result()
                await loop?.terminate()
                await recorder.stop()
                await matchedRecorder?.stop()
                outcome.recorder = recorder.statistics
            }
            guard service.isRunning else {
                let status = await service.waitForExit(timeout: .zero)
                throw BenchmarkError("earshot-capture exited after the pass-thru (status \(status.map(String.init) ?? "?"))")
            }
            await service.shutdown()
            return outcome
        } catch {
            await loop?.terminate()
            await recorder?.stop()
            await matchedRecorder?.stop()
            let running = service.isRunning
            await service.shutdown()
            let log = service.logText
            if !(error is CancellationError), !log.isEmpty {
                progress("earshot-capture log (\(running ? "was running" : "had exited")):\n" + log.suffix(4000))
            }
            throw error
        }
    }

    /// A received chunk: where it came from, what it held, when it was read and received.
    struct ReceivedChunk: Sendable {
        let path: ObjectPath?
        let data: [UInt8]
        let sequence: UInt64
        let monotonicUs: UInt64
        let receivedUs: UInt64

        /// `chunk` as it arrives now, from `path`.
        init(_ chunk: AudioChunk, from path: ObjectPath?) {
            receivedUs = monotonicMicroseconds()
            self.path = path
            data = chunk.data
            sequence = chunk.sequence
            monotonicUs = chunk.monotonicUs
        }

        /// Its arrival at the client less its `MonotonicUs`, when it was read.
        var latencyUs: UInt64 { receivedUs >= monotonicUs ? receivedUs - monotonicUs : 0 }
    }

    /// Starts the pass-thru through EarshotClient (`perform`, which subscribes to its chunks
    /// and its `Finished` before it calls), collects its chunks as the client yields them,
    /// dated then (the latency an application sees), until its result, and checks them.
    private func passThru(_ configuration: CaptureConfiguration, client: DBusConnection, service: ServiceProcess,
                          content: [UInt8], window: UsageWindow?) async throws -> ChunkLatencyResult {
        var request = AudioPassThruRequest(samplingRate: configuration.samplingRate, bitsPerSample: 16,
                                           maxDurationMs: UInt32(seconds * 1000))
        request.chunkMs = configuration.chunkMs
        if configuration.processed { request.noiseSuppression = .high }
        let expected = configuration.expectedChunks(seconds: seconds)
        let hostStart = HostSample.take()
        let passThru = try await Earshot(connection: client).capture.perform(request)
        // The receiving loop starts at once: the first chunk comes a chunk's length later.
        async let received = Self.receive(passThru, capacity: expected + 16, window: window)
        let end = try await waitForResult(of: passThru, service: service, timeout: .seconds(seconds + 30))
        let hostBusy = HostSample.busyPercent(hostStart, HostSample.take())
        // The client's chunk sequence ends with the result: every chunk came before it.
        let all = await received
        return ChunkLatencyResult(configuration: configuration, seconds: seconds, expectedChunks: expected,
                                  chunks: all, content: content, finished: FinishedSignal(end), hostBusyPercent: hostBusy)
    }

    /// A `Delivery` `stream` pass-thru: its audio read from `OpenStream`'s pipe (opened at
    /// once, so it carries all but the first moments), its chunks counted as the bytes
    /// arrive; checked against the microphone input. Returns the bytes read. Through
    /// EarshotClient, which subscribes to `Finished` before it calls, as this did.
    private func streamPassThru(_ configuration: CaptureConfiguration, client: DBusConnection, service: ServiceProcess,
                                content: [UInt8]?, window: UsageWindow?, epoch: UInt64) async throws -> Int {
        let capture = Earshot(connection: client).capture
        var request = AudioPassThruRequest(samplingRate: configuration.samplingRate, bitsPerSample: 16,
                                           maxDurationMs: UInt32(seconds * 1000))
        request.chunkMs = configuration.chunkMs
        if configuration.processed { request.noiseSuppression = .high }
        request.delivery = .stream
        let passThru = try await capture.perform(request)
        let stream = try await passThru.openStream()
        guard let fd = stream.take() else { throw BenchmarkError("\(CaptureContract.PassThru.openStream.name) gave no descriptor for \(passThru.path)") }
        defer { Glibc.close(fd) }
        let chunkBytes = configuration.chunkBytes
        let capacity = seconds * Int(configuration.samplingRate) * configuration.bytesPerFrame
        // The pipe is read on a thread of its own until EOF (the pass-thru's end), the way
        // arecord's pipes are read (`PacedRecorder`): on 10 ms ticks away from the
        // microphones' deliveries (`readerTickOffset`), taking what has arrived, so that a
        // write into it wakes no one.
        let streamed = await withCheckedContinuation { (done: CheckedContinuation<[UInt8], Never>) in
            let reader = Thread {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                var bytes: [UInt8] = []
                bytes.reserveCapacity(capacity)
                var buffer = [UInt8](repeating: 0, count: 65536)
                let period = PacedRecorder.tickNanoseconds
                var tick = WakePhase(epochNanoseconds: epoch, offsetNanoseconds: Self.readerTickOffset)
                    .next(atOrAfter: monotonicNanoseconds(), period: period)
                reading: while true {
                    let n = read(fd, &buffer, buffer.count)
                    if n < 0, errno == EINTR { continue }
                    if n < 0, errno == EAGAIN {
                        PacedRecorder.sleep(until: tick)
                        tick += period
                        continue reading
                    }
                    if n <= 0 { break }
                    let before = bytes.count / chunkBytes
                    bytes += buffer[0..<n]
                    for sequence in before..<(bytes.count / chunkBytes) { window?.chunkArrived(sequence: UInt64(sequence)) }
                }
                done.resume(returning: bytes)
            }
            reader.start()
        }
        let end = try await waitForResult(of: passThru, service: service, timeout: .seconds(seconds + 30))
        let captured = Int(end.framesCaptured) * configuration.bytesPerFrame
        // What a PipeWire source gives is its own: only the count is checked then.
        guard end.resultCode == .success, streamed.count > captured / 2, streamed.count <= captured,
              content.map({ $0[(captured - streamed.count)..<captured].elementsEqual(streamed) }) ?? true else {
            throw BenchmarkError("the stream carried \(streamed.count) bytes that are not the last of the \(captured) captured (\(end.resultCode.rawValue))")
        }
        return streamed.count
    }

    /// The receiving loop: the arrival time first, then everything else.
    private static func receive(_ passThru: PassThru, capacity: Int, window: UsageWindow?) async -> [ReceivedChunk] {
        var chunks: [ReceivedChunk] = []
        chunks.reserveCapacity(capacity)
        for await chunk in passThru {
            chunks.append(ReceivedChunk(chunk, from: passThru.path))
            window?.chunkArrived(sequence: chunk.sequence)
        }
        return chunks
    }

    /// Waits for a pass-thru's result (its `Finished`, through EarshotClient), looking once a
    /// second whether the service still runs and the time is up.
    private func waitForResult(of passThru: PassThru, service: ServiceProcess, timeout: Duration) async throws -> PassThruResult {
        let path = passThru.path
        // The first of: the result (or the client's error), the service's exit, the timeout.
        let (outcomes, continuation) = AsyncStream<Result<PassThruResult, any Error>>.makeStream()
        let waiting = Task {
            do {
                let result = try await passThru.result
                continuation.yield(.success(result))
            } catch {
                continuation.yield(.failure(error))
            }
        }
        let watching = Task {
            let deadline = ContinuousClock.now + timeout
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { return }
                if !service.isRunning {
                    let status = await service.waitForExit(timeout: .zero)
                    continuation.yield(.failure(BenchmarkError("earshot-capture exited (status \(status.map(String.init) ?? "?")) before \(path) finished")))
                    return
                }
                if ContinuousClock.now >= deadline {
                    continuation.yield(.failure(BenchmarkError("no Finished from \(path) within \(timeout)")))
                    return
                }
            }
        }
        defer {
            watching.cancel()
            waiting.cancel()
            continuation.finish()
        }
        for await outcome in outcomes { return try outcome.get() }
        try Task.checkCancellation()
        throw BenchmarkError("no Finished from \(path)")
    }

    /// Pseudo-random bytes (never repeating within the input), so a misplaced chunk shows.
    static func noise(_ count: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var word = state >> 16
                for _ in 0..<min(6, count - index) {
                    buffer[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
            initialized = count
        }
    }
}

struct FinishedSignal: Encodable, Sendable {
    let resultCode: String
    let success: Bool
    let reason: String
    let framesCaptured: UInt64
    let durationMs: UInt32

    init(_ result: PassThruResult) {
        resultCode = result.resultCode.rawValue
        success = result.success
        reason = result.reason.rawValue
        framesCaptured = result.framesCaptured
        durationMs = result.durationMs
    }
}
