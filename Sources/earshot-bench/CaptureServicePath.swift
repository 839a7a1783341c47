import ContractCore
import EarshotCabinSound
import EarshotClient
import EarshotContract
import EarshotSync
import EarshotTestHarness
import Foundation
import Synchronization

/// Scenes through the real services, in real time: for each, a private bus, earshot-alerts
/// speaking into a live cabin (`CabinLoop`: its speaker through the scene's echo path, on top
/// of what else the microphone hears) and earshot-capture reading the cabin's microphone at
/// `--pace device`, as from a sound card. Over the prompt the pass-thru has `BargeIn` and the
/// prompt as its `InitialPrompt`, which the alert service speaks and hands over as it plays
/// it (`PlayedAudio`). Over an alert or the radio the microphone holds their echo and the
/// cabin's speakers' monitor hears them an output buffer before it (capture's
/// `--echo-reference`): the pass-thru has `EchoCancel`.
///
/// Each scene is recorded twice by the same services, one pass-thru after the other (the cabin
/// plays the scene anew to each): the first after the services start, and a later one, as
/// most pass-thrus on a head unit are; with `EchoCancel` its canceller starts from the echo
/// delay the first measured. A scene takes twice its own length; `concurrency` of them run at once, started
/// ahead of the judge's asking (`start`).
final class CaptureServicePath: Sendable {
    static let executables = ["earshot-capture", "earshot-alerts"]
    static let concurrency = 3

    /// Whether both services are built next to this program.
    static var available: Bool {
        executables.allSatisfy {
            FileManager.default.isExecutableFile(atPath: ServiceProcess.productsDirectory.appendingPathComponent($0).path)
        }
    }

    let prompt: String
    /// A scene's first and later pass-thru: what the owner received, and what the
    /// microphone heard (the cabin's own samples, unprocessed), sample for sample.
    struct Recorded: Sendable {
        let first: [Float]
        let later: [Float]
        let firstHeard: [Float]
        let laterHeard: [Float]
    }
    private let runs = Mutex<[Int: Task<Recorded, any Error>]>([:])
    private let late = Mutex(0)
    /// Over the prompt, where the cabin heard the alert service's first frame in each scene's
    /// first and later pass-thru, in ms from where the scene places its far end (`playsAt`).
    private let promptHeard = Mutex<(first: [Int], later: [Int])>(([], []))
    /// The scenes `start` was given.
    private let scenes = Mutex<[RecogniserJudge.Scene]>([])
    /// Scenes over the prompt that `costs` runs.
    static let costScenes = 3

    /// What a group of scenes cost the capture service: every chunk's latency (its arrival
    /// at the client less its `MonotonicUs`, when it was read: the processing, the signal
    /// and the client, in ns), and the service's CPU time over the pass-thrus, with the
    /// audio they captured.
    struct Cost: Sendable {
        var latencies: [UInt64] = []
        var cpuNanoseconds: UInt64 = 0
        var audioSeconds = 0.0

        mutating func add(_ other: Cost) {
            latencies += other.latencies
            cpuNanoseconds += other.cpuNanoseconds
            audioSeconds += other.audioSeconds
        }
    }

    init(prompt: String) {
        self.prompt = prompt
    }

    /// Starts every scene, `concurrency` at a time, in order.
    func start(_ scenes: [RecogniserJudge.Scene]) {
        self.scenes.withLock { $0 = scenes }
        let slots = AsyncSemaphore(Self.concurrency)
        runs.withLock { runs in
            for scene in scenes {
                runs[scene.index] = Task { [self] in
                    await slots.wait(turn: scene.index)
                    defer { slots.signal() }
                    return try await recordFirstAndLater(scene)
                }
            }
        }
    }

    /// What the owner of the first pass-thru after the services started received in
    /// `scene`, sample for sample with its microphone.
    func output(of scene: RecogniserJudge.Scene) async throws -> [Float] {
        try await outputs(of: scene).first
    }

    /// The same for the later pass-thru, on services that had recorded the scene once.
    func laterOutput(of scene: RecogniserJudge.Scene) async throws -> [Float] {
        try await outputs(of: scene).later
    }

    /// What the microphone heard in the first pass-thru, or with `later` the later one: the
    /// scene as the services' own timing made it, unprocessed.
    func heard(in scene: RecogniserJudge.Scene, later: Bool) async throws -> [Float] {
        let recorded = try await outputs(of: scene)
        return later ? recorded.laterHeard : recorded.firstHeard
    }

    private func outputs(of scene: RecogniserJudge.Scene) async throws -> Recorded {
        guard let run = runs.withLock({ $0[scene.index] }) else { return try await recordFirstAndLater(scene) }
        return try await run.value
    }

    /// `scene` cancelled on new services, by the first pass-thru after they start and a later one.
    private func recordFirstAndLater(_ scene: RecogniserJudge.Scene) async throws -> Recorded {
        let recorded = try await record(scene, cancelling: true, passThrus: 2)
        if scene.farEnd == .prompt {
            func offset(_ heard: Int?) -> Int? { heard.map { ($0 - scene.playsAt) * 1000 / CabinSound.rate } }
            promptHeard.withLock { heard in
                if let first = offset(recorded[0].heardFrom) { heard.first.append(first) }
                if let later = offset(recorded[1].heardFrom) { heard.later.append(later) }
            }
        }
        return Recorded(first: recorded[0].samples, later: recorded[1].samples, firstHeard: recorded[0].heard,
                        laterHeard: recorded[1].heard)
    }

    /// Chunk latency and the capture service's CPU over the prompt, the first `costScenes`
    /// scenes over it that `start` was given, each run alone (nothing else running: the judge's scenes run three at once beside the
    /// recogniser), twice: a pass-thru with `BargeIn` and the prompt, echo cancelled against
    /// what the alert service played; and a pass-thru with no processing while the alert
    /// service speaks the same prompt into the cabin, asked on its own (the same work beside
    /// the pass-thru, nothing cancelled).
    func costs() async throws -> EchoResults.ServicePathCosts {
        var cancelled = Cost(), unprocessed = Cost()
        for scene in scenes.withLock({ $0 }).filter({ $0.farEnd == .prompt }).prefix(Self.costScenes) {
            cancelled.add(try await record(scene, cancelling: true)[0].cost)
            unprocessed.add(try await record(scene, cancelling: false)[0].cost)
        }
        return EchoResults.ServicePathCosts(echoCancelled: .init(cancelled), unprocessed: .init(unprocessed))
    }

    /// The speech the cabins heard late, over every scene so far, in ms.
    var lateSpeakerMs: Int { late.withLock { $0 } * 1000 / CabinSound.rate }

    /// Over the prompt, where the alert service's first frame was heard against the scene's
    /// far end, in ms (later is positive), in each scene's first and later pass-thru so far.
    var promptHeardMs: (first: [Int], later: [Int]) { promptHeard.withLock { $0 } }

    /// `scene` through the services, `passThrus` times one after the other on the same
    /// services: for each, what the pass-thru's owner received, sample for sample with its
    /// microphone, and what it cost. Over the prompt, `cancelling`: the pass-thru has
    /// `BargeIn` and the prompt; otherwise it has neither, and the alert service is asked to
    /// speak the prompt as the pass-thru starts. Otherwise, `EchoCancel` when `cancelling`.
    private func record(_ scene: RecogniserJudge.Scene, cancelling: Bool,
                        passThrus: Int = 1) async throws -> [(samples: [Float], cost: Cost, heard: [Float], heardFrom: Int?)] {
        let rate = CabinSound.rate
        let prompted = scene.farEnd == .prompt
        // Over an alert or the radio the speakers are given the far end an output buffer
        // before its echo starts, and the monitor hears it then.
        let monitored = prompted || scene.played.isEmpty ? []
            : CabinSound.placed(scene.played, at: scene.playsAt - CabinLoop.defaultSpeakerBufferMs * rate / 1000,
                                count: scene.microphone.count)
        return try await CabinServices.with(scene: prompted ? scene.besidesFarEnd : scene.microphone, room: prompted ? scene.room : [],
                                            monitored: monitored, echoReference: true, rate: rate, lingerSeconds: 1) { services in
            var recorded: [(samples: [Float], cost: Cost, heard: [Float], heardFrom: Int?)] = []
            for _ in 0 ..< passThrus {
                // The cabin serves a new reader from the scene's start once it has seen the
                // last one close, at its next period's write: a reader that opened again
                // before that would hear the scene go on past its end.
                if !recorded.isEmpty { try await Task.sleep(for: .milliseconds(300)) }
                recorded.append(try await passThru(scene, cancelling: cancelling, on: services))
            }
            services.cabin.stop()
            return recorded
        }
    }

    /// One pass-thru of `scene` on `services`, as `record` describes.
    /// With what it recorded, what its microphone was given, and the microphone's sample the
    /// cabin heard the speaker's first frame with (nil when nothing played).
    private func passThru(_ scene: RecogniserJudge.Scene, cancelling: Bool,
                          on services: CabinServices) async throws -> (samples: [Float], cost: Cost, heard: [Float], heardFrom: Int?) {
        let rate = CabinSound.rate
        let prompted = scene.farEnd == .prompt
        var request = AudioPassThruRequest(samplingRate: UInt32(rate), bitsPerSample: 16,
                                           maxDurationMs: UInt32((scene.microphone.count * 1000 + rate - 1) / rate))
        if prompted {
            request.bargeIn = cancelling
            if cancelling { request.initialPrompt = [.text(prompt)] }
        } else {
            request.echoCancel = cancelling
        }
        let pid = services.session.service.pid
        let cpuBefore = ProcessSample.cpuNanoseconds(of: pid)
        let passThru = try await CaptureProxy(connection: services.session.client).perform(request)
        let speaking = prompted && !cancelling
            ? try await AlertsProxy(connection: services.session.client).startSpeaking([.text(prompt)]) : nil
        var bytes: [UInt8] = []
        var latencies: [UInt64] = []
        for await chunk in passThru {
            let received = CaptureBenchmark.ReceivedChunk(chunk, from: passThru.path)
            latencies.append(received.latencyUs * 1000)
            bytes += chunk.data
        }
        let result = try await passThru.result
        let cpuAfter = ProcessSample.cpuNanoseconds(of: pid)
        _ = try await speaking?.result
        // The reader has closed: what the cabin heard late of this pass-thru, before the
        // next reader starts it anew.
        late.withLock { $0 += services.cabin.lateSpeakerSamples }
        let heardFrom = services.cabin.speakerHeardFrom
        let heard = CabinSound.placed(services.cabin.recorded().made, at: 0, count: scene.microphone.count)
        guard result.resultCode == .success else {
            throw HarnessError("scene \(scene.index): the pass-thru ended with \(result.resultCode.rawValue)\n\(services.session.service.logText.suffix(1500))")
        }
        var cost = Cost(latencies: latencies, audioSeconds: Double(bytes.count / 2) / Double(rate))
        if let cpuBefore, let cpuAfter, cpuAfter >= cpuBefore { cost.cpuNanoseconds = cpuAfter - cpuBefore }
        return (CabinSound.placed(CabinSound.samples(pcm16: bytes), at: 0, count: scene.microphone.count), cost, heard, heardFrom)
    }
}

/// At most `slots` holders at once, let in by turn: the lowest turn waiting goes first.
final class AsyncSemaphore: Sendable {
    private struct State {
        var free: Int
        var waiting: [(turn: Int, go: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Mutex<State>

    init(_ slots: Int) { state = Mutex(State(free: slots)) }

    func wait(turn: Int) async {
        await withCheckedContinuation { (go: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.free > 0 {
                    s.free -= 1
                    return true
                }
                s.waiting.append((turn, go))
                return false
            }
            if now { go.resume() }
        }
    }

    func signal() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let first = s.waiting.indices.min(by: { s.waiting[$0].turn < s.waiting[$1].turn }) else {
                s.free += 1
                return nil
            }
            return s.waiting.remove(at: first).go
        }
        next?.resume()
    }
}
