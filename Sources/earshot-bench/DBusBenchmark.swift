import ArgumentParser
import EarshotDBus
import EarshotEcho
import EarshotTestHarness
import Foundation

/// `earshot-bench dbus`: the Swift binding against plain libdbus (C), both talking to the
/// same echo server on a private bus in the same run.
struct DBusBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dbus",
        abstract: "Compare the Swift D-Bus binding with a plain libdbus C client.",
        discussion: """
            Starts a private dbus-daemon and one org.earshot.Echo1 server (this binary, \
            `serve-echo`), then measures, with the Swift binding and with a C client that calls \
            libdbus directly, against that one server:
              - EchoBytes(ay) -> ay round-trips (16 B, 3.2 KB, 64 KiB, 1 MiB): p50 and p99 latency, \
            the Swift calls awaited from a task on the cooperative pool three ways: as every \
            EarshotClient call is (the default path, the figure the goal is judged on: the \
            caller's thread waits for the reply itself, for up to 2 ms), with the task suspended \
            until the I/O thread reads the reply (a connection opened with callerWait: .zero), \
            and on the connection's I/O thread (withTaskExecutorPreference, an opt-in),
              - this process's CPU time per round-trip while each client made its calls (all \
            threads: what a call costs the client, apart from the bus and the server),
              - unicast Bytes(ay, t) signal throughput (EmitBytes): signals/s and MB/s.
            The clients run in alternating rounds so that drift affects both equally: 25 by \
            default, so that one round of 16-byte calls lasts about 20 ms per client and a \
            slow spell of the machine falls on both rather than on one client's round. \
            Goals: round-trip p50 ratio default/C <= 1.10 at 16 B and 3.2 KB, signal throughput \
            ratio swift/C >= 0.8. They are reported, not enforced.
            At 1 MiB much of either client's time is glibc's allocator giving memory back to \
            the kernel and faulting it in again; GLIBC_TUNABLES (e.g. \
            glibc.malloc.trim_threshold=67108864:glibc.malloc.mmap_threshold=33554432), which \
            the bus and the echo server inherit, shows the figures without that, and is printed. \
            The echo server, as every service, adds glibc.malloc.tcache_count=0 and \
            glibc.malloc.arena_max=2 to it unless it sets those tunables; both clients call \
            the same server.
            """)

    @Option(help: "Multiply every iteration and signal count by this factor.")
    var iterationsScale: Double = 1

    @Option(help: "Alternating Swift/C rounds per round-trip payload (the calls per payload are split among them).")
    var rounds: Int = 25

    @Option(help: "Untimed warm-up calls per client and payload (capped at the payload's iterations).")
    var warmup: Int = 200

    @Option(help: "Signals per round (before --iterations-scale).")
    var signalCount: Int = 6000

    @Option(help: "Payload of each signal in bytes.")
    var signalSize: Int = 3200

    @Option(help: "Alternating Swift/C signal rounds (each about a quarter of a second by default).")
    var signalRounds: Int = 10

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    func validate() throws {
        guard iterationsScale > 0, iterationsScale.isFinite else { throw ValidationError("--iterations-scale must be > 0") }
        guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1") }
        guard signalRounds >= 1 else { throw ValidationError("--signal-rounds must be at least 1") }
        guard warmup >= 0 else { throw ValidationError("--warmup must not be negative") }
        guard signalCount >= 1 else { throw ValidationError("--signal-count must be at least 1") }
        guard (0...(1 << 20)).contains(signalSize) else { throw ValidationError("--signal-size must be 0...1048576") }
    }

    func run() async throws {
        let plan = BenchmarkPlan(scale: iterationsScale, rounds: rounds, warmup: warmup,
                                 signalCount: signalCount, signalSize: signalSize, signalRounds: signalRounds)
        try await DBusBenchmark(plan: plan).run().print(json: json)
    }
}

/// What to measure, after scaling.
struct BenchmarkPlan {
    struct Payload {
        let label: String
        let size: Int
        let perRound: Int
        let warmup: Int
    }

    let payloads: [Payload]
    let rounds: Int
    let signalCount: Int
    let signalSize: Int
    let signalRounds: Int
    let scale: Double

    init(scale: Double, rounds: Int, warmup: Int, signalCount: Int, signalSize: Int, signalRounds: Int) {
        let base: [(String, Int, Int)] = [
            ("16 B", 16, 5000),
            ("3.2 KB", 3200, 5000),
            ("64 KiB", 65536, 1000),
            ("1 MiB", 1_048_576, 100),
        ]
        payloads = base.map { label, size, iterations in
            let total = max(rounds, Int((Double(iterations) * scale).rounded()))
            let perRound = (total + rounds - 1) / rounds
            return Payload(label: label, size: size, perRound: perRound, warmup: min(warmup, perRound * rounds))
        }
        self.rounds = rounds
        self.signalCount = min(Int(UInt32.max), max(1, Int((Double(signalCount) * scale).rounded())))
        self.signalSize = signalSize
        self.signalRounds = signalRounds
        self.scale = scale
    }
}

/// One benchmark run: the bus, the server, both clients, and the measurements.
struct DBusBenchmark {
    let plan: BenchmarkPlan

    static let echoMember = "EchoBytes"
    static let emitMember = "EmitBytes"
    /// EmitBytes replies only after emitting every signal; give big runs time.
    static let emitTimeout: Duration = .seconds(300)

    func run() async throws -> BenchmarkResults {
        progress("starting a private dbus-daemon")
        let bus = try await PrivateBus.start()
        defer { bus.stop() }

        let executable = ServiceProcess.productsDirectory.appendingPathComponent("earshot-bench").path
        progress("starting the echo server (\(executable) serve-echo)")
        let server = try await ServiceProcess(executable, arguments: ["serve-echo"], bus: bus,
                                              busName: EchoService.busName)
        defer { server.stop() }

        do {
            let swift = try DBusConnection.open(.address(bus.address))
            defer { swift.close() }
            let tasks = try DBusConnection.open(.address(bus.address), callerWait: .zero)
            defer { tasks.close() }
            let c = try CEchoPeer(address: bus.address)
            defer { c.close() }
            progress("clients: swift \(swift.uniqueName), swift waiting in tasks \(tasks.uniqueName), C \(c.uniqueName); "
                     + "server pid \(server.pid)")
            return try await measure(SwiftClients(callerThread: swift, taskWait: tasks), c: c, bus: bus)
        } catch {
            let log = server.logText
            if !log.isEmpty {
                progress("echo server log (\(server.isRunning ? "running" : "exited")):\n" + log.suffix(4000))
            }
            throw error
        }
    }

    /// The Swift clients: the default connection, and one whose callers never wait on their
    /// own thread.
    struct SwiftClients {
        let callerThread: DBusConnection
        let taskWait: DBusConnection
    }

    /// How a Swift client's calls wait for their replies.
    enum SwiftPath: CaseIterable {
        /// From a task on the pool, the caller's thread waiting first (the default).
        case callerThread
        /// From a task on the pool, suspended until the I/O thread reads the reply.
        case taskWait
        /// On the connection's I/O thread.
        case ioThread
    }

    private func measure(_ swift: SwiftClients, c: CEchoPeer, bus: PrivateBus) async throws -> BenchmarkResults {
        let small = plan.payloads[0]
        let clientCall = try await measureClientCall(bus: bus, swift: swift.callerThread, c: c, calls: small.perRound * plan.rounds,
                                                     warmup: small.warmup)
        var roundTrips: [RoundTripResult] = []
        for payload in plan.payloads {
            roundTrips.append(try await measureRoundTrips(payload, swift: swift, c: c))
        }
        let signals = try await measureSignals(swift: swift.callerThread, c: c)
        return BenchmarkResults(
            libdbusVersion: CEchoPeer.libdbusVersion,
            processors: ProcessInfo.processInfo.activeProcessorCount,
            iterationsScale: plan.scale,
            mallocTunables: ProcessInfo.processInfo.environment["GLIBC_TUNABLES"],
            clientCall: clientCall,
            roundTrips: roundTrips,
            signals: signals)
    }

    // MARK: Round-trips

    private func measureRoundTrips(_ payload: BenchmarkPlan.Payload, swift: SwiftClients,
                                   c: CEchoPeer) async throws -> RoundTripResult {
        let bytes = (0..<payload.size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let value = DBusValue.bytes(DBusBytes(bytes))
        progress("round-trips \(payload.label): warm-up \(payload.warmup) per client, then \(plan.rounds) × \(payload.perRound) per client")

        var discard: [UInt64] = []
        discard.reserveCapacity(payload.warmup)
        for path in SwiftPath.allCases {
            try await swiftEcho(swift, path, value, expected: payload.size, label: payload.label, times: payload.warmup,
                                into: &discard)
            discard.removeAll(keepingCapacity: true)
        }
        try cEcho(c, bytes, label: payload.label, times: payload.warmup, into: &discard)

        var latencies: [SwiftPath: [UInt64]] = [:], cLatencies: [UInt64] = []
        // This process's CPU time (all its threads) while each client makes its calls.
        var cpu: [SwiftPath: UInt64] = [:], cCPU: UInt64 = 0
        for path in SwiftPath.allCases {
            var reserved: [UInt64] = []
            reserved.reserveCapacity(payload.perRound * plan.rounds)
            latencies[path] = reserved
        }
        cLatencies.reserveCapacity(payload.perRound * plan.rounds)
        for _ in 0..<plan.rounds {
            for path in SwiftPath.allCases {
                let start = processCPUNanoseconds()
                try await swiftEcho(swift, path, value, expected: payload.size, label: payload.label,
                                    times: payload.perRound, into: &latencies[path, default: []])
                cpu[path, default: 0] += processCPUNanoseconds() - start
            }
            let start = processCPUNanoseconds()
            try cEcho(c, bytes, label: payload.label, times: payload.perRound, into: &cLatencies)
            cCPU += processCPUNanoseconds() - start
        }
        let calls = Double(payload.perRound * plan.rounds)
        func perCall(_ nanoseconds: UInt64?) -> Double { Double(nanoseconds ?? 0) / 1000 / calls }
        func summary(_ path: SwiftPath) -> LatencySummary { LatencySummary(latencies[path] ?? []) }
        return RoundTripResult(payload: payload.label, bytes: payload.size, defaultPath: summary(.callerThread),
                               taskWait: summary(.taskWait), ioThread: summary(.ioThread), c: LatencySummary(cLatencies),
                               cpuMicrosecondsPerCall: .init(defaultPath: perCall(cpu[.callerThread]), taskWait: perCall(cpu[.taskWait]),
                                                             ioThread: perCall(cpu[.ioThread]), c: perCall(cCPU)))
    }

    /// Sequential EchoBytes calls through the binding, each timed on its own, made the way
    /// `path` says: from a task on the cooperative pool, as every EarshotClient call is (on
    /// the default connection, or on the one whose callers never wait on their own thread),
    /// or on the connection's I/O thread (the binding's task executor), as a blocking C
    /// client runs on the thread that reads its replies.
    private func swiftEcho(_ swift: SwiftClients, _ path: SwiftPath, _ value: DBusValue, expected: Int, label: String,
                           times: Int, into latencies: inout [UInt64]) async throws {
        let connection = path == .taskWait ? swift.taskWait : swift.callerThread
        var measured: [UInt64] = []
        measured.reserveCapacity(times)
        measured = try await withTaskExecutorPreference(path == .ioThread ? connection : nil) { [measured] in
            var measured = measured
            try await swiftEchoCalls(connection, value, expected: expected, label: label, times: times, into: &measured)
            return measured
        }
        latencies += measured
    }

    private func swiftEchoCalls(_ connection: DBusConnection, _ value: DBusValue, expected: Int, label: String,
                                times: Int, into latencies: inout [UInt64]) async throws {
        for _ in 0..<times {
            let start = monotonicNanoseconds()
            let reply: [DBusValue]
            do {
                reply = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                  interface: EchoService.interfaceName, member: Self.echoMember, [value])
            } catch {
                throw BenchmarkError("swift: EchoBytes(\(label)) failed: \(error)")
            }
            let end = monotonicNanoseconds()
            let length: Int? = if reply.count == 1, case .bytes(let echoed) = reply[0] { echoed.count } else { reply.first?.bytesValue?.count }
            guard let length, length == expected else {
                throw BenchmarkError("swift: EchoBytes(\(label)) replied \(length.map { "\($0) bytes" } ?? "\(reply)"), expected \(expected) bytes")
            }
            latencies.append(end - start)
        }
    }

    /// CPU time used so far by every thread of this process.
    private func processCPUNanoseconds() -> UInt64 {
        ProcessSample.cpuNanoseconds(of: getpid()) ?? 0
    }

    /// Sequential EchoBytes calls through the C client, timed exactly like the Swift ones.
    private func cEcho(_ c: CEchoPeer, _ bytes: [UInt8], label: String, times: Int,
                       into latencies: inout [UInt64]) throws {
        let expected = Int32(bytes.count)
        try bytes.withUnsafeBufferPointer { buffer in
            // A non-nil pointer even for an empty payload.
            let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
            for _ in 0..<times {
                let start = monotonicNanoseconds()
                let length = c.echoBytes(base, expected)
                let end = monotonicNanoseconds()
                guard length == expected else {
                    throw BenchmarkError(length < 0
                        ? "C: EchoBytes(\(label)) failed: \(c.lastError)"
                        : "C: EchoBytes(\(label)) replied \(length) bytes, expected \(expected) bytes")
                }
                latencies.append(end - start)
            }
        }
    }

    // MARK: Signals

    private func measureSignals(swift: DBusConnection, c: CEchoPeer) async throws -> SignalResult {
        let count = plan.signalCount, size = plan.signalSize
        progress("unicast signals: \(plan.signalRounds) rounds × \(count) signals of \(size) bytes per client")
        // A short untimed run each, so both paths are warm.
        let warmupCount = min(count, 1000)
        _ = try await swiftSignals(swift, count: warmupCount, size: size)
        _ = try cSignals(c, count: warmupCount, size: size)

        var swiftRounds: [UInt64] = [], cRounds: [UInt64] = []
        for _ in 0..<plan.signalRounds {
            swiftRounds.append(try await swiftSignals(swift, count: count, size: size))
            cRounds.append(try cSignals(c, count: count, size: size))
        }
        return SignalResult(count: count, bytes: size, swift: ThroughputSummary(count: count, bytes: size, rounds: swiftRounds),
                            c: ThroughputSummary(count: count, bytes: size, rounds: cRounds))
    }

    /// One Swift round: subscribe (no match rule: the signals are unicast), call EmitBytes,
    /// and receive until `count` signals and the reply are in. Returns the nanoseconds from
    /// just before the call until both arrived (the C client, timed around
    /// `earshot_c_receive_signals`, also waits for both).
    private func swiftSignals(_ connection: DBusConnection, count: Int, size: Int) async throws -> UInt64 {
        let subscription = try await connection.subscribe(
            MatchRule(interface: EchoService.interfaceName, member: "Bytes"), addMatch: false)
        defer { subscription.cancel() }

        enum Arrival: Sendable { case signals(UInt64), reply(UInt64), timeout }
        let start = monotonicNanoseconds()
        let end = try await withThrowingTaskGroup(of: Arrival.self) { group -> UInt64 in
            group.addTask {
                do {
                    _ = try await connection.call(destination: EchoService.busName, path: EchoService.path,
                                                  interface: EchoService.interfaceName, member: Self.emitMember,
                                                  [.uint32(UInt32(count)), .uint32(UInt32(size))], timeout: Self.emitTimeout)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw BenchmarkError("swift: EmitBytes(\(count)) failed: \(error)")
                }
                return .reply(monotonicNanoseconds())
            }
            group.addTask {
                var received = 0
                for await message in subscription {
                    let body = message.body
                    guard body.count == 2, case .uint64(let sequence) = body[1],
                          let length = body[0].bytesValue?.count else {
                        throw BenchmarkError("swift: Bytes signal with signature '\(message.signature)', expected 'ayt'")
                    }
                    guard length == size else {
                        throw BenchmarkError("swift: Bytes signal \(sequence) carries \(length) bytes, expected \(size)")
                    }
                    guard sequence == UInt64(received) else {
                        throw BenchmarkError("swift: Bytes signal sequence \(sequence) arrived where \(received) was expected (gap or reorder)")
                    }
                    received += 1
                    if received == count { return .signals(monotonicNanoseconds()) }
                }
                try Task.checkCancellation()
                throw BenchmarkError("swift: the signal subscription ended after \(received) of \(count) signals")
            }
            group.addTask {
                try await Task.sleep(for: Self.emitTimeout + .seconds(5))
                return .timeout
            }
            var signalsDone: UInt64?, replyDone: UInt64?
            while signalsDone == nil || replyDone == nil {
                switch try await group.next() {
                case .signals(let time): signalsDone = time
                case .reply(let time): replyDone = time
                case .timeout: throw BenchmarkError("swift: EmitBytes(\(count)) did not complete within \(Self.emitTimeout)")
                case nil: throw BenchmarkError("swift: signal round ended early")
                }
            }
            group.cancelAll()
            return max(signalsDone!, replyDone!)
        }
        return end - start
    }

    /// One C round, timed around the C call.
    private func cSignals(_ c: CEchoPeer, count: Int, size: Int) throws -> UInt64 {
        let start = monotonicNanoseconds()
        let received = c.receiveSignals(count: UInt32(count), size: UInt32(size))
        let end = monotonicNanoseconds()
        guard received == count else {
            throw BenchmarkError("C: EmitBytes(\(count)) failed: \(c.lastError)")
        }
        return end - start
    }
}

/// Progress goes to stderr so stdout holds only the results.
func progress(_ text: String) {
    FileHandle.standardError.write(Data(("earshot-bench: " + text + "\n").utf8))
}
