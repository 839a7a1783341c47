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
/// `--pace device`, as from a sound card. The pass-thru has `BargeIn`; over the prompt it has
/// the prompt as its `InitialPrompt`, which the alert service speaks and hands over as it
/// plays it (`PlayedAudio`). Over an alert or the radio there is no prompt, and the microphone
/// holds their echo: nothing hands those over.
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
    private let costs = Mutex((echoCancelled: Cost(), unprocessed: Cost()))

    /// What a group of scenes cost the capture service: every chunk's latency (its arrival
    /// at the client less its `MonotonicUs`, when it was read: the processing, the signal
    /// and the client, in ns), and the service's CPU time over the pass-thrus, with the
    /// audio they captured.
    struct Cost: Sendable {
        var latencies: [UInt64] = []
        var cpuNanoseconds: UInt64 = 0
        var audioSeconds = 0.0
    }

    init(prompt: String) {
        self.prompt = prompt
    }

    /// Starts every scene, `concurrency` at a time, in order.
    func start(_ scenes: [RecogniserJudge.Scene]) {
        let slots = AsyncSemaphore(Self.concurrency)
        runs.withLock { runs in
            for scene in scenes {
                runs[scene.index] = Task { [self] in
                    await slots.wait(turn: scene.index)
                    defer { slots.signal() }
                    return try await record(scene)
                }
            }
        }
    }

    /// What the pass-thru's owner received in `scene`, sample for sample with its microphone.
    func output(of scene: RecogniserJudge.Scene) async throws -> [Float] {
        guard let run = runs.withLock({ $0[scene.index] }) else { return try await record(scene) }
        return try await run.value
    }

    /// The chunks' latencies and the service's CPU over the prompt (echo cancellation against
    /// what the alert service played) and in the other scenes (`BargeIn` with no prompt:
    /// nothing to cancel with, the microphone's samples as read), over every scene so far.
    var chunkCosts: EchoResults.ServicePathCosts {
        let (cancelled, unprocessed) = costs.withLock { ($0.echoCancelled, $0.unprocessed) }
        return EchoResults.ServicePathCosts(echoCancelled: .init(cancelled), unprocessed: .init(unprocessed))
    }

    /// The speech the cabins heard late, over every scene so far, in ms.
    var lateSpeakerMs: Int { late.withLock { $0 } * 1000 / CabinSound.rate }

    private func record(_ scene: RecogniserJudge.Scene) async throws -> [Float] {
        let rate = CabinSound.rate
        let prompted = scene.farEnd == .prompt
        return try await CabinServices.with(scene: prompted ? scene.besidesFarEnd : scene.microphone, room: prompted ? scene.room : [],
                                            rate: rate, lingerSeconds: 1) { services in
            var request = AudioPassThruRequest(samplingRate: UInt32(rate), bitsPerSample: 16,
                                               maxDurationMs: UInt32((scene.microphone.count * 1000 + rate - 1) / rate))
            request.bargeIn = true
            if prompted { request.initialPrompt = [.text(prompt)] }
            let pid = services.session.service.pid
            let cpuBefore = ProcessSample.cpuNanoseconds(of: pid)
            let passThru = try await CaptureProxy(connection: services.session.client).perform(request)
            var bytes: [UInt8] = []
            var latencies: [UInt64] = []
            for await chunk in passThru {
                let now = monotonicMicroseconds()
                latencies.append(now >= chunk.monotonicUs ? (now - chunk.monotonicUs) * 1000 : 0)
                bytes += chunk.data
            }
            let result = try await passThru.result
            if let cpuBefore, let cpuAfter = ProcessSample.cpuNanoseconds(of: pid), cpuAfter >= cpuBefore {
                costs.withLock { costs in
                    func add(_ cost: inout Cost) {
                        cost.latencies += latencies
                        cost.cpuNanoseconds += cpuAfter - cpuBefore
                        cost.audioSeconds += Double(bytes.count / 2) / Double(rate)
                    }
                    if prompted { add(&costs.echoCancelled) } else { add(&costs.unprocessed) }
                }
            }
            services.cabin.stop()
            late.withLock { $0 += services.cabin.lateSpeakerSamples }
            guard result.resultCode == .success else {
                throw HarnessError("scene \(scene.index): the pass-thru ended with \(result.resultCode.rawValue)\n\(services.session.service.logText.suffix(1500))")
            }
            return CabinSound.placed(CabinSound.samples(pcm16: bytes), at: 0, count: scene.microphone.count)
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
