import EarshotContract
import EarshotTestHarness
import Foundation
import Testing

/// The installed head unit in a box (`deploy/earshot-dev test-system`): the release build
/// installed by deploy/install, the shipped units, activation files and policy, the
/// system-wide PipeWire, and ordinary users calling over the system bus.
@Suite(.serialized, .enabled(if: BoxScenario.isBooted, "runs inside deploy/earshot-dev test-system"), .journalOnFailure)
struct InstalledSystemTests {
    static let orchestrator = "org.earshot.Orchestrator1 /org/earshot/Orchestrator1 org.earshot.Orchestrator1"
    static let capture = "org.earshot.Capture1 /org/earshot/Capture1 org.earshot.Capture1"
    private typealias Job = OrchestratorContract.Job
    private typealias PassThru = CaptureContract.PassThru

    static let services = ["capture", "alerts", "pieces", "session", "orchestrator"]

    /// `app` records a piece through the orchestrator: each service, stopped before, is
    /// started by the bus through its unit, and the job ends as documented with the piece
    /// stored.
    @Test func appRecordsAPieceThroughTheOrchestrator() async throws {
        let box = BoxScenario.box
        try await box.run("sox -n -r 48000 -c 1 -b 16 words.wav synth 8 sine 300-1200 vol 0.5", as: "app")
        try await box.run("systemctl stop " + Self.services.map { "earshot-\($0).service" }.joined(separator: " "))
        for service in Self.services {
            let state = try await box.attempt("systemctl is-active earshot-\(service).service").output
            #expect(state == "inactive\n", "earshot-\(service) before the first call: \(state)")
        }
        try await BoxScenario.feedingMicrophone("/home/app/words.wav") { try await Self.recordThroughTheOrchestrator() }
    }

    static func recordThroughTheOrchestrator() async throws {
        let box = BoxScenario.box
        let reply = try await BoxScenario.busctl("""
            call \(InstalledSystemTests.orchestrator) \(OrchestratorContract.Manager.recordPiece.name) 'a{sv}' 4 Title s "Box take" Prompt s "Say it now" \
            \(CaptureContract.Manager.Keys.maxDuration.name) u 2000 \(CaptureContract.Manager.Keys.outliveOwner.name) b true
            """, as: "app")
        let job = try BoxScenario.quoted(reply)
        var state = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            state = try await BoxScenario.property(OrchestratorContract.busName, job, Job.interface.name, Job.state, as: "app")
            if state == "s \"finished\"" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(state == "s \"finished\"")
        let result = try await BoxScenario.property(OrchestratorContract.busName, job, Job.interface.name, Job.resultCode, as: "app")
        let journal = try await box.attempt("journalctl -b -u 'earshot-*' --no-pager | tail -40").output
        #expect(result == "s \"SUCCESS\"", "\(journal)")
        let piece = try BoxScenario.quoted(try await BoxScenario.property(OrchestratorContract.busName, job, Job.interface.name,
                                                                           Job.pieceId, as: "app"))
        let stored = try await BoxScenario.busctl("call org.earshot.Pieces1 /org/earshot/Pieces1 org.earshot.Pieces1 Get s \(piece)", as: "app")
        #expect(stored.contains("\"Box take\""))
        #expect(stored.contains("\"Author\" s \"app\""))
        // Every service was started by the bus through its systemd unit.
        for service in Self.services {
            let state = try await box.run("systemctl show -P ActiveState earshot-\(service).service")
            #expect(state == "active\n", "earshot-\(service): \(state)")
        }
        let owners = try await box.run("busctl --system list --no-pager | grep '^org.earshot'")
        for name in ["Capture1", "Alerts1", "Pieces1", "Session1", "Orchestrator1"] {
            #expect(owners.split(separator: "\n").contains { $0.hasPrefix("org.earshot.\(name) ") && $0.contains("earshot-") && $0.contains(" earshot ") },
                    "org.earshot.\(name) is not owned by its unit as earshot:\n\(owners)")
        }
    }

    /// A pass-thru with `OutputPath` in `app`'s home, asked with busctl: the file is `app`'s
    /// and holds exactly what the microphone heard. `other` may not end it, read it, or own
    /// an Earshot name.
    @Test func aPassThruWritesIntoTheCallersHomeAsTheCaller() async throws {
        let box = BoxScenario.box
        try await box.run("rm -f take.wav && sox -n -r 48000 -c 1 -b 16 microphone.wav synth 6 sine 200-2000 vol 0.5", as: "app")
        try await BoxScenario.feedingMicrophone("/home/app/microphone.wav") { try await Self.passThruIntoTheCallersHome() }
    }

    static func passThruIntoTheCallersHome() async throws {
        let box = BoxScenario.box
        let missed = try await MissedCycles.watch()
        let path = try BoxScenario.quoted(try await BoxScenario.busctl("""
            call \(InstalledSystemTests.capture) \(CaptureContract.Manager.performAudioPassThru.name) 'a{sv}' 6 \(CaptureContract.Manager.Keys.samplingRate.name) u 48000 \(CaptureContract.Manager.Keys.bitsPerSample.name) u 16 \(CaptureContract.Manager.Keys.audioType.name) s PCM \
            \(CaptureContract.Manager.Keys.maxDuration.name) u 2000 \(CaptureContract.Manager.Keys.outliveOwner.name) b true \(CaptureContract.Manager.Keys.outputPath.name) s /home/app/take.wav
            """, as: "app"))
        // Capture's PipeWire client reads the microphone on a real-time thread while it records.
        let threads = try await box.run("ps -L -o cls=,rtprio=,comm= -p $(systemctl show -P MainPID earshot-capture)")
        #expect(threads.split(separator: "\n").contains { $0.split(separator: " ").first == "FF" },
                "no real-time thread in earshot-capture while it records:\n\(threads)")
        // And the microphone is read on one, as a sound card's would be (feed-microphone).
        let microphone = try await box.run("ps -L -o cls=,rtprio=,comm= -p $(pgrep -f '[p]ipewire -c /run/earshot-box-microphone')")
        #expect(microphone.split(separator: "\n").contains { $0.split(separator: " ").first == "FF" },
                "no real-time thread in the microphone's PipeWire client:\n\(microphone)")
        for member in [PassThru.cancel.name, PassThru.end.name, PassThru.openStream.name] {
            let refused = try await box.attempt("busctl --system call org.earshot.Capture1 \(path) org.earshot.Capture1.PassThru \(member)",
                                                as: "other")
            // busctl prints the message of org.earshot.Error.Disallowed.
            #expect(!refused.succeeded && refused.errors.contains("only the owner"), "other's \(member): \(refused.errors)")
        }
        for name in ["Capture1", "Alerts1", "Pieces1", "Session1", "Orchestrator1"] {
            let owned = try await box.attempt("busctl --system call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus RequestName su org.earshot.\(name) 4",
                                              as: "other")
            // busctl says "Access denied" for the policy's refusal.
            #expect(!owned.succeeded && owned.errors.contains("Access denied"), "other owning org.earshot.\(name): \(owned.errors)")
        }
        try await box.waitUntil("busctl --system get-property org.earshot.Capture1 /org/earshot/Capture1 org.earshot.Capture1 Active | grep -q '\"/\"'",
                                as: "app", timeout: .seconds(20))
        // The recording is done: the daemon's level goes back now, its reports stay in the journal.
        try await missed.stop()
        let owner = try await box.run("stat -c %U:%G /home/app/take.wav")
        #expect(owner.trimmingCharacters(in: .whitespacesAndNewlines) == "app:app")
        let taken = try BoxScenario.samples(ofWave: box.file("home/app/take.wav"))
        let heard = try BoxScenario.samples(ofWave: box.file("home/app/microphone.wav"))
        #expect(taken.count >= 48000 * 19 / 10, "\(taken.count) samples")
        let place = try #require(BoxScenario.place(taken, in: heard), "the recording is not a run of the microphone's samples")
        // Every sample is the microphone's, in its order. A run may end in a gap only where
        // PipeWire's graph missed cycles (when this machine stalls its real-time threads, the
        // microphone's client, capture's and the graph's own driver miss them alike): whole
        // quanta of the microphone's skipped, or silent in their stead, and PipeWire says so.
        let (gaps, difference) = BoxScenario.gaps(taken, of: heard, at: place)
        var explained = true
        if !gaps.isEmpty {
            let reports = try await missed.reports()
            let quanta = Set(reports.map(\.quantum))
            // A sample at either end of a gap may be the microphone's own silence.
            func whole(_ samples: Int) -> Bool { quanta.contains { q in [-1, 0, 1].contains { (samples + $0) % q == 0 } } }
            explained = !reports.isEmpty && gaps.allSatisfy { whole($0.missing) && whole($0.silent) }
            #expect(explained, """
                the recording has gaps of \(gaps) where PipeWire reported \
                \(reports.isEmpty ? "no missed cycle" : reports.map(\.line).joined(separator: "; "))
                """)
            print("the recording has gaps of \(gaps); PipeWire: \(reports.map(\.line).joined(separator: "; "))")
        }
        if difference != nil || !explained {
            // Kept beside the run's logs, to be looked at.
            let kept = box.directory.appendingPathComponent("failed")
            try? FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
            for name in ["take.wav", "microphone.wav"] {
                try? FileManager.default.copyItem(at: box.file("home/app/\(name)"), to: kept.appendingPathComponent(name))
            }
        }
        #expect(difference == nil, "the recording is not the microphone's samples: \(difference ?? "")")
    }

    /// The head unit's PipeWire runs its graph on a real-time thread (module-rt, with what
    /// pipewire.service allows it): a graph at normal priority wakes late on a busy
    /// machine, and a microphone fed by a client misses cycles.
    @Test func thePipeWireGraphRunsInRealTime() async throws {
        let threads = try await BoxScenario.box.run("ps -L -o cls=,rtprio=,comm= -p $(pgrep -x pipewire)")
        #expect(threads.split(separator: "\n").contains { $0.split(separator: " ").first == "FF" },
                "no real-time thread in the PipeWire daemon:\n\(threads)")
    }

    /// Each unit's exposure inside the box, beside systemd-hostnamed's: at most 2.0.
    @Test func everyUnitIsExposedAtMostTwo() async throws {
        let box = BoxScenario.box
        var report: [String] = []
        for unit in ["earshot-capture.service", "earshot-alerts.service", "earshot-session.service", "earshot-pieces.service",
                     "earshot-orchestrator.service", "earshot-open-as@0.service", "systemd-hostnamed.service"] {
            let text = try await box.run("systemd-analyze security --no-pager \(unit) | tail -1")
            let score = try #require(text.split(separator: " ").compactMap { Double($0) }.last, "\(unit): \(text)")
            report.append("\(unit) \(score)")
            if unit.hasPrefix("earshot-") { #expect(score <= 2.0, "\(unit): \(text)") }
        }
        print("exposure: " + report.joined(separator: ", "))
    }
}
