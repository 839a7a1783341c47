import Dispatch
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
