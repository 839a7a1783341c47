import ArgumentParser
import CCaptureLoop

/// The C capture loop the capture benchmark starts beside earshot-capture: this same
/// binary, re-executed with `capture-loop …`. Hidden from help; not meant to be run by hand.
struct CaptureLoopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture-loop",
        abstract: "Capture with the C reference loop, one signal per chunk (used by `earshot-bench capture`).",
        shouldDisplay: false)

    @Option var address: String
    @Option var device: String
    @Option var destination: String
    @Option var rate: UInt32 = 16000
    @Option var channels: UInt32 = 1
    @Option var chunkMs: UInt32 = 100
    @Option var seconds: UInt32
    /// The PCM delivers in real time by itself (a live microphone): no pacing clock.
    @Flag var pacedByDevice = false

    func run() throws {
        var error = [CChar](repeating: 0, count: 512)
        let sent = address.withCString { address in
            device.withCString { device in
                destination.withCString { destination in
                    var settings = earshot_capture_loop_settings(address: address, device: device, destination: destination,
                                                                 rate: rate, channels: channels, chunk_ms: chunkMs,
                                                                 seconds: seconds, paced_by_device: pacedByDevice ? 1 : 0)
                    return earshot_capture_loop_run(&settings, &error, error.count)
                }
            }
        }
        guard sent >= 0 else {
            throw BenchmarkError("capture-loop: " + error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        print("capture-loop: \(sent) chunks sent")
    }
}
