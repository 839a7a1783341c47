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
/// A scene takes its own length; `concurrency` of them run at once, started ahead of the
/// judge's asking (`start`).
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
    private let runs = Mutex<[Int: Task<[Float], any Error>]>([:])
    private let late = Mutex(0)
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
                    return try await record(scene, cancelling: true).samples
                }
            }
        }
    }

    /// What the pass-thru's owner received in `scene`, sample for sample with its microphone.
    func output(of scene: RecogniserJudge.Scene) async throws -> [Float] {
        guard let run = runs.withLock({ $0[scene.index] }) else { return try await record(scene, cancelling: true).samples }
        return try await run.value
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
            cancelled.add(try await record(scene, cancelling: true).cost)
            unprocessed.add(try await record(scene, cancelling: false).cost)
        }
        return EchoResults.ServicePathCosts(echoCancelled: .init(cancelled), unprocessed: .init(unprocessed))
    }

    /// The speech the cabins heard late, over every scene so far, in ms.
    var lateSpeakerMs: Int { late.withLock { $0 } * 1000 / CabinSound.rate }

    /// `scene` through the services: what the pass-thru's owner received, sample for sample
    /// with its microphone, and what it cost. Over the prompt, `cancelling`: the pass-thru
    /// has `BargeIn` and the prompt; otherwise it has neither, and the alert service is asked
    /// to speak the prompt as the pass-thru starts. Otherwise, `EchoCancel` when `cancelling`.
    private func record(_ scene: RecogniserJudge.Scene, cancelling: Bool) async throws -> (samples: [Float], cost: Cost) {
        let rate = CabinSound.rate
        let prompted = scene.farEnd == .prompt
        // Over an alert or the radio the speakers are given the far end an output buffer
        // before its echo starts, and the monitor hears it then.
        let monitored = prompted || scene.played.isEmpty ? []
            : CabinSound.placed(scene.played, at: scene.playsAt - CabinLoop.defaultSpeakerBufferMs * rate / 1000,
                                count: scene.microphone.count)
        return try await CabinServices.with(scene: prompted ? scene.besidesFarEnd : scene.microphone, room: prompted ? scene.room : [],
                                            monitored: monitored, echoReference: true, rate: rate, lingerSeconds: 1) { services in
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
            services.cabin.stop()
            late.withLock { $0 += services.cabin.lateSpeakerSamples }
            guard result.resultCode == .success else {
                throw HarnessError("scene \(scene.index): the pass-thru ended with \(result.resultCode.rawValue)\n\(services.session.service.logText.suffix(1500))")
            }
            var cost = Cost(latencies: latencies, audioSeconds: Double(bytes.count / 2) / Double(rate))
            if let cpuBefore, let cpuAfter, cpuAfter >= cpuBefore { cost.cpuNanoseconds = cpuAfter - cpuBefore }
            return (CabinSound.placed(CabinSound.samples(pcm16: bytes), at: 0, count: scene.microphone.count), cost)
        }
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
