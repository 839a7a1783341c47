import EarshotDBus
import Foundation
import Glibc

/// A service executable from the build directory, started against a private bus.
///
/// Output goes to a log file; the process runs under `setpriv --pdeathsig KILL` so it never
/// outlives the test; `stop()` (or deinit) ends it.
public final class ServiceProcess: @unchecked Sendable {
    // @unchecked: `process` is only used through Foundation's thread-safe Process API and
    // every other stored property is an immutable `let`.
    public let executable: String
    public let logURL: URL
    private let process: Process

    /// The directory holding the build's executables: the one holding this test or
    /// benchmark binary (`.build/<triple>/<configuration>`).
    public static var productsDirectory: URL {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent()
    }

    /// Starts `executable` (a name in the products directory, or a path) with `--address`
    /// of `bus`, then waits until it owns `busName` (when given).
    public init(_ executable: String, arguments: [String] = [], bus: PrivateBus, busName: String?,
                environment: [String: String] = [:], readyTimeout: Duration = .seconds(20)) async throws {
        self.executable = executable
        let path = executable.contains("/") ? executable : Self.productsDirectory.appendingPathComponent(executable).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(path) is not built (run `swift build` first)")
        }
        logURL = bus.directory.appendingPathComponent("\((executable as NSString).lastPathComponent)-\(UUID().uuidString.prefix(8)).log")
        let log = FileHandle(forWritingAtPath: try PrivateBus.createFile(logURL))

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--pdeathsig", "KILL", path] + arguments + ["--address", bus.address]
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env.removeValue(forKey: "JOURNAL_STREAM")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()

        guard let busName else { return }
        let watcher = try bus.connect()
        defer { watcher.close() }
        let deadline = ContinuousClock.now + readyTimeout
        while try await watcher.nameOwner(busName) == nil {
            guard process.isRunning else {
                throw HarnessError("\(executable) exited with status \(process.terminationStatus) before owning \(busName):\n\(logText)")
            }
            guard ContinuousClock.now < deadline else {
                stop()
                throw HarnessError("\(executable) did not own \(busName) within \(readyTimeout):\n\(logText)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Everything the service has logged so far.
    public var logText: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Sends `signal` to the service.
    public func signal(_ signal: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// Waits for the process to exit; returns its exit status, or nil on timeout.
    /// A death by signal is reported as 128 + the signal number.
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Stops the service (SIGTERM, then SIGKILL after two seconds).
    public func stop() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGTERM)
        for _ in 0..<200 where process.isRunning { usleep(10_000) }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
