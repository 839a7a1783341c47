import ArgumentParser
import EarshotDBus
import EarshotTestHarness
import Foundation
import Glibc

/// `earshot-bench footprint`: what each service costs a small board at rest and at work.
struct FootprintBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "footprint",
        abstract: "Measure each service's start time and idle and busy memory beside systemd-hostnamed.",
        discussion: """
            Needs the release builds of the five services next to this binary (swift build -c \
            release). Starts a private dbus-daemon and, one after the other, each service with the \
            test stack's embedded defaults (a file microphone, the null speaker, data in the bus's \
            temporary directory), then systemd-hostnamed on the same bus (as its system bus) as the \
            peer. Each service is started twice: first with no data of its own yet (the piece store \
            and the session's state file are made then), then, once that process has left, again, as \
            a head unit starts it at every boot. For each: both start times (from the spawn to its \
            name's NameOwnerChanged arriving at a client; the goal is on the second), VmRSS idle (--idle-seconds after start), VmRSS busy (right after \
            --busy-seconds of the load benchmark's scenario with --clients clients; for hostnamed, \
            GetAll calls), VmRSS after (--settle-seconds after the work ended, against idle: what \
            the work left behind, also split into what anonymous memory and mapped files added) and \
            VmHWM, then its CPU time and wake-ups at rest (over --rest-seconds after the after \
            sample). Idle VmRSS is also split into its anonymous part (heap, stacks) and its file \
            part (the binary and libraries as far as the kernel mapped them; that part grows with \
            the block device's read-ahead, read_ahead_kb, which is printed). Ratios are against \
            hostnamed's figures. --service measures only the services named. With --stack it \
            starts all five at once instead and reports, --idle-seconds after the last, each one's \
            PSS (proportional: what it shares with the others counts once in the sum) and \
            anonymous memory, and the sums.
            """)

    @Option(help: "Seconds to wait after the name is owned before the idle sample.")
    var idleSeconds = 2.0

    @Option(help: "Seconds to wait after the work before the after sample: past the 60 s that finished request objects linger, counted from the last to finish (queued requests finish up to about 10 s after the load stops), and a heap trim.")
    var settleSeconds = 75.0

    @Option(help: "Seconds after the after sample over which CPU time and wake-ups at rest are measured.")
    var restSeconds = 15.0

    @Option(help: "Seconds of work before the busy sample.")
    var busySeconds = 5.0

    @Option(help: "Concurrent clients during the busy phase.")
    var clients = 4

    @Option(help: "A bus name to measure (repeatable; default: every service). hostnamed is always measured.")
    var service: [String] = []

    @Flag(help: "Measure the five services running at once: PSS and anonymous memory, and their sums.")
    var stack = false

    @Flag(help: "Print the results as JSON instead of tables.")
    var json = false

    static let hostnamed = "/lib/systemd/systemd-hostnamed"

    func validate() throws {
        guard idleSeconds >= 0, settleSeconds >= 0, busySeconds > 0, restSeconds > 0, clients >= 1 else {
            throw ValidationError("--idle-seconds and --settle-seconds must not be negative; --busy-seconds, --rest-seconds and --clients must be positive")
        }
        let known = ServiceStack.services.map(\.busName)
        if let unknown = service.first(where: { !known.contains($0) }) {
            throw ValidationError("--service \(unknown): not a service; one of \(known.joined(separator: ", "))")
        }
    }

    func run() async throws {
        for service in ServiceStack.services { _ = try builtService(service.executable) }
        guard FileManager.default.isExecutableFile(atPath: Self.hostnamed) else {
            throw BenchmarkError("\(Self.hostnamed) is missing: install systemd")
        }
        let (idle, settle, busy, rest, clients) = (idleSeconds, settleSeconds, busySeconds, restSeconds, clients)
        if stack {
            let results = try await runInterruptibly(interrupted: "the bus, the services and the temporary files are gone") {
                try await StackFootprint(idle: .milliseconds(Int(idle * 1000))).run()
            }
            try results.print(json: json)
            return
        }
        let chosen = service.isEmpty ? ServiceStack.services.map(\.busName) : service
        let results = try await runInterruptibly(interrupted: "the bus, the services and the temporary files are gone") {
            try await FootprintBenchmark(idle: .milliseconds(Int(idle * 1000)), busy: .milliseconds(Int(busy * 1000)),
                                         settle: .milliseconds(Int(settle * 1000)), rest: .milliseconds(Int(rest * 1000)), clients: clients,
                                         busNames: chosen).run()
        }
        try results.print(json: json)
    }
}

struct FootprintBenchmark: Sendable {
    let idle: Duration
    let busy: Duration
    let settle: Duration
    let rest: Duration
    let clients: Int
    /// The services measured, by bus name.
    let busNames: [String]

    struct Row: Encodable, Sendable {
        let name: String
        /// The start with its data already there (the second); for the peer, its only one.
        let startMilliseconds: Double
        /// A start with its data there, its executable and libraries first dropped from the
        /// page cache (as far as no other process maps them).
        var coldStartMilliseconds: Double?
        /// Where each start's time went.
        let start: StartAnatomy?
        var coldStart: StartAnatomy?
        let idleRssKiB: UInt64
        let idleAnonKiB: UInt64
        let idleFileKiB: UInt64
        let busyRssKiB: UInt64
        /// Nil when the process had left by then (systemd-hostnamed exits when idle).
        let afterRssKiB: UInt64?
        /// The after sample's parts; nil with `afterRssKiB`.
        let afterAnonKiB: UInt64?
        let afterFileKiB: UInt64?
        let hwmKiB: UInt64
        /// At rest after the after sample; nil when the process had left.
        let rest: RestingCost?
    }

    func run() async throws -> FootprintResults {
        try await ServiceStack.with([]) { stack in
            var rows: [Row] = []
            for service in ServiceStack.services where busNames.contains(service.busName) {
                // The first start makes its data (the piece store, the session's state).
                progress("\(service.executable): first start, then a cold start")
                let files = PageCache.mappedFiles(of: try await stack.launch(service.executable).pid)
                await stack.process(service.executable)?.shutdown()
                PageCache.evict(files)
                let (_, cold, coldAnatomy) = try await timedStart(service.busName, on: stack) { try await stack.launch(service.executable).pid }
                await stack.process(service.executable)?.shutdown()
                progress("\(service.executable): start, idle, busy")
                var row = try await measure(service.busName, on: stack, start: {
                    try await stack.launch(service.executable).pid
                }, work: { try await busyPhase(service.busName, stack: stack) })
                row.coldStartMilliseconds = cold
                row.coldStart = coldAnatomy
                rows.append(row)
                await stack.process(service.executable)?.shutdown()
            }
            progress("systemd-hostnamed: first start, cold start, start, idle, busy")
            let peer = Locked<ChildProcess?>(nil)
            defer { peer.withLock { $0?.stop() } }
            let startPeer = {
                let process = try ChildProcess([FootprintBenchmarkCommand.hostnamed], environment: ["DBUS_SYSTEM_BUS_ADDRESS": stack.bus.address],
                                               logPath: stack.file("hostnamed.log").path)
                peer.withLock { $0 = process }
                return process.pid
            }
            let hostnamed = "org.freedesktop.hostname1"
            let peerFiles = PageCache.mappedFiles(of: try await timedStart(hostnamed, on: stack, start: startPeer).pid)
            peer.withLock { $0?.stop() }
            PageCache.evict(peerFiles)
            let (_, peerCold, peerColdAnatomy) = try await timedStart(hostnamed, on: stack, start: startPeer)
            peer.withLock { $0?.stop() }
            var hostname = try await measure(hostnamed, on: stack, start: startPeer, work: { try await hostnameCalls(stack: stack) })
            hostname.coldStartMilliseconds = peerCold
            hostname.coldStart = peerColdAnatomy
            return FootprintResults(processors: ProcessInfo.processInfo.activeProcessorCount,
                                    readAheadKiB: Self.readAheadKiB(of: stack.bus.directory), idleSeconds: seconds(idle),
                                    busySeconds: seconds(busy), settleSeconds: seconds(settle), restSeconds: seconds(rest), clients: clients,
                                    services: rows, peer: hostname)
        }
    }

    /// The read-ahead of the block device that holds `directory` (where the services'
    /// binaries are too, in a checkout), from sysfs; nil when it cannot be told.
    static func readAheadKiB(of directory: URL) -> Int? {
        guard let path = readAheadFile(of: directory), let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The sysfs file holding the read-ahead (KiB) of the block device that holds `path`.
    static func readAheadFile(of path: URL) -> String? {
        var status = stat()
        guard stat(path.path, &status) == 0 else { return nil }
        // glibc's encoding of a dev_t (its major() and minor() are macros Swift cannot call).
        let dev = UInt64(status.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff)
        let minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
        let device = "/sys/dev/block/\(major):\(minor)"
        // A partition's own queue settings are its disk's, one directory up.
        return [device + "/queue/read_ahead_kb", device + "/../queue/read_ahead_kb"].first { FileManager.default.fileExists(atPath: $0) }
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Starts a process with `start` (returning its pid), times its name's arrival, samples
    /// it idle, runs `work`, samples it busy, after the work and at rest.
    private func measure(_ busName: String, on stack: ServiceStack, start: () async throws -> Int32,
                         work: () async throws -> Void) async throws -> Row {
        let (pid, startMilliseconds, anatomy) = try await timedStart(busName, on: stack, start: start)
        try await Task.sleep(for: idle)
        let idleSample = try ProcessSample.take(pid)
        try await work()
        let busySample = try ProcessSample.take(pid)
        try await Task.sleep(for: settle)
        // A process that has exited (or is a zombie) shows no VmRSS.
        let afterSample = (try? ProcessSample.take(pid)).flatMap { $0.rssKiB > 0 ? $0 : nil }
        let resting = afterSample == nil ? nil : try await RestingCost.measure(pid, over: rest)
        return Row(name: busName, startMilliseconds: startMilliseconds, start: anatomy, idleRssKiB: idleSample.rssKiB,
                   idleAnonKiB: idleSample.rssAnonKiB, idleFileKiB: idleSample.rssFileKiB, busyRssKiB: busySample.rssKiB,
                   afterRssKiB: afterSample?.rssKiB, afterAnonKiB: afterSample?.rssAnonKiB, afterFileKiB: afterSample?.rssFileKiB,
                   hwmKiB: afterSample?.hwmKiB ?? busySample.hwmKiB, rest: resting)
    }

    /// Starts a process with `start` (returning its pid) and times its name's arrival at the
    /// client, in ms, with where that time went.
    private func timedStart(_ busName: String, on stack: ServiceStack,
                            start: () async throws -> Int32) async throws -> (pid: Int32, ms: Double, anatomy: StartAnatomy?) {
        let owners = try await stack.client.subscribe(MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
                                                                member: "NameOwnerChanged"))
        defer { owners.cancel() }
        let arrived = Task { () -> UInt64? in
            while let signal = await owners.next(timeout: .seconds(30)) {
                if signal.body.first?.stringValue == busName, signal.body.last?.stringValue?.isEmpty == false { return monotonicNanoseconds() }
            }
            return nil
        }
        let spawned = monotonicNanoseconds()
        let pid = try await start()
        guard let owned = await arrived.value else { throw BenchmarkError("\(busName) was never owned") }
        let ms = Double(owned - spawned) / 1_000_000
        return (pid, ms, StartAnatomy.read(pid, wallMilliseconds: ms))
    }

    /// The load benchmark's scenario for `busName`, `clients` at once, for `busy`.
    private func busyPhase(_ busName: String, stack: ServiceStack) async throws {
        try await Self.busyPhase(busName, stack: stack, clients: clients, duration: busy)
    }

    /// The load benchmark's scenario for `busName` on `stack`, `clients` at once, for `duration`.
    static func busyPhase(_ busName: String, stack: ServiceStack, clients: Int, duration busy: Duration) async throws {
        let material = try FuzzMaterial(directory: stack.file("footprint-\(busName)"))
        guard let scenario = LoadScenarios.scenario(for: busName, wave: material.wave),
              let pid = stack.process(ServiceStack.services.first { $0.busName == busName }?.executable ?? "")?.pid else {
            throw BenchmarkError("no load scenario for \(busName)")
        }
        _ = try await LoadRunner.run(bus: .address(stack.bus.address), scenario: scenario, clients: clients, duration: busy, pid: pid,
                                     settle: .zero)
    }

    /// `GetAll` on hostnamed's object from `clients` clients for `busy`.
    private func hostnameCalls(stack: ServiceStack) async throws {
        let deadline = ContinuousClock.now + busy
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    let client = try await stack.bus.connect()
                    defer { client.close() }
                    while ContinuousClock.now < deadline {
                        _ = try await client.call(destination: "org.freedesktop.hostname1", path: "/org/freedesktop/hostname1",
                                                  interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                                  [.string("org.freedesktop.hostname1")])
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

struct FootprintResults: BenchmarkReport, Sendable {
    let processors: Int
    let readAheadKiB: Int?
    let idleSeconds: Double
    let busySeconds: Double
    let settleSeconds: Double
    let restSeconds: Double
    let clients: Int
    let services: [FootprintBenchmark.Row]
    let peer: FootprintBenchmark.Row

    func table() -> String {
        let widths = [-26, 9, 9, 7, 7, 7, 7, 7, 11, 7, 7, 7, 9, 8, 8, 10, 8]
        let readAhead = readAheadKiB.map { "\($0) KiB" } ?? "unknown"
        var lines = ["""
            each service alone on a private bus, \(processors) processors, block device read-ahead \(readAhead); \
            start: with its data there, started just before (cold: the same, its executable and libraries first dropped from the page cache where no other process maps them); idle: \(TableFormat.fixed(idleSeconds, 1)) s after start; busy: after \(TableFormat.fixed(busySeconds, 1)) s of the load \
            scenario, \(clients) clients; after: \(TableFormat.fixed(settleSeconds, 1)) s later; memory in MiB (VmRSS; anon and file: \
            idle VmRSS's parts; +anon and +file: what each part added from idle to after); ratios against systemd-hostnamed; \
            at rest, over \(TableFormat.fixed(restSeconds, 1)) s after the after sample: CPU µs per second and wake-ups per second \
            (voluntary context switches of all threads)
            """]
        lines.append(TableFormat.row(["", "start ms", "cold ms", "idle", "anon", "file", "busy", "after", "after-idle", "+anon", "+file", "HWM",
                                      "start ×", "idle ×", "busy ×", "rest µs/s", "wakes/s"], widths: widths))
        func mib(_ kib: UInt64) -> String { TableFormat.fixed(Double(kib) / 1024, 1) }
        func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? TableFormat.fixed(a / b, 2) : "n/a" }
        func signed(_ value: Double?) -> String { value.map { ($0 >= 0 ? "+" : "") + TableFormat.fixed($0, 1) } ?? "" }
        func growth(_ after: UInt64?, _ idle: UInt64) -> Double? { after.map { (Double($0) - Double(idle)) / 1024 } }
        for row in services + [peer] {
            lines.append(TableFormat.row([row.name, TableFormat.fixed(row.startMilliseconds, 1),
                                          row.coldStartMilliseconds.map { TableFormat.fixed($0, 1) } ?? "-", mib(row.idleRssKiB), mib(row.idleAnonKiB),
                                          mib(row.idleFileKiB), mib(row.busyRssKiB), row.afterRssKiB.map(mib) ?? "exited",
                                          signed(growth(row.afterRssKiB, row.idleRssKiB)),
                                          signed(growth(row.afterAnonKiB, row.idleAnonKiB)),
                                          signed(growth(row.afterFileKiB, row.idleFileKiB)), mib(row.hwmKiB), ratio(row.startMilliseconds, peer.startMilliseconds),
                                          ratio(Double(row.idleRssKiB), Double(peer.idleRssKiB)),
                                          ratio(Double(row.busyRssKiB), Double(peer.busyRssKiB)),
                                          row.rest.map { TableFormat.fixed($0.cpuMicrosecondsPerSecond, 1) } ?? "exited",
                                          row.rest.map { TableFormat.fixed($0.wakeupsPerSecond, 2) } ?? "exited"], widths: widths))
        }
        lines.append("where each start's time went (the process's threads when its name arrived):")
        for row in services + [peer] {
            if let cold = row.coldStart { lines.append("  \(row.name), cold start: \(cold.summary)") }
            if let start = row.start { lines.append("  \(row.name), start: \(start.summary)") }
        }
        let total = services.reduce(0) { $0 + $1.idleRssKiB }
        lines.append("the \(services.count == ServiceStack.services.count ? "five services" : "services measured") idle: \(mib(total)) MiB in all")
        return lines.joined(separator: "\n")
    }
}
