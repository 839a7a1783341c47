import Dispatch
import EarshotTestHarness
import Foundation
import Glibc

/// What a benchmark hands back: figures that print as tables or as JSON.
protocol BenchmarkReport: Encodable {
    func table() -> String
}

extension BenchmarkReport {
    /// Prints the report as tables, or as JSON with `json`.
    func print(json: Bool) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            Swift.print(String(decoding: try encoder.encode(self), as: UTF8.self))
        } else {
            Swift.print(table())
        }
    }
}

/// Runs `work` so that Ctrl-C or SIGTERM cancels it (it then tears everything down) and
/// reports the interruption with `interrupted`.
func runInterruptibly<Report: BenchmarkReport & Sendable>(interrupted: String,
                                                           _ work: @escaping @Sendable () async throws -> Report) async throws -> Report {
    let task = Task { try await work() }
    let signals = [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            progress("signal \(number): stopping and tearing down")
            task.cancel()
        }
        source.resume()
        return source
    }
    defer { signals.forEach { $0.cancel() } }
    do {
        return try await task.value
    } catch is CancellationError {
        throw BenchmarkError("interrupted; " + interrupted)
    }
}

/// The nearest-rank percentile `p` (0...1) of ascending `sorted` values; nil when empty.
func nearestRank<Value>(_ sorted: [Value], _ p: Double) -> Value? {
    guard !sorted.isEmpty else { return nil }
    let rank = Int((p * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// Runs `body` on a new private dbus-daemon, shut down afterwards however `body` ends.
func withPrivateBus<Result>(_ body: (PrivateBus) async throws -> Result) async throws -> Result {
    progress("starting a private dbus-daemon")
    let bus = try await PrivateBus.start()
    defer { bus.stop() }  // the last resort; the normal ends shut it down below
    do {
        let result = try await body(bus)
        await bus.shutdown()
        return result
    } catch {
        await bus.shutdown()
        throw error
    }
}

/// The path of a release service built next to this binary, or an error saying how to build it.
func builtService(_ name: String) throws -> String {
    let path = ServiceProcess.productsDirectory.appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchmarkError("\(path) is not built: run `swift build -c release --product \(name)` first")
    }
    return path
}
