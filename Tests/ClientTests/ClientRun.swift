import EarshotTestHarness
import Foundation
import Glibc
import Testing

/// What one run of the `earshot` binary did.
struct ClientResult: Sendable, CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// stdout parsed as one JSON document.
    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    /// stdout as a JSON object.
    func object() throws -> [String: Any] {
        try #require(try json() as? [String: Any], "not a JSON object: \(stdout)")
    }

    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

/// The `earshot` binary running as a child process, its stdout and stderr in files.
final class RunningClient: Sendable {
    let arguments: [String]
    private let child: ChildProcess
    private let outPath: String
    private let errPath: String

    /// Starts the built `earshot` with `arguments` and `--address` of `bus`.
    init(_ arguments: [String], bus: PrivateBus) throws {
        self.arguments = arguments
        let executable = ServiceProcess.productsDirectory.appendingPathComponent("earshot").path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw HarnessError("\(executable) is not built (build the earshot product first)")
        }
        let name = "earshot-\(UUID().uuidString.prefix(8))"
        outPath = bus.directory.appendingPathComponent(name + ".out").path
        errPath = bus.directory.appendingPathComponent(name + ".err").path
        let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw HarnessError("cannot create \(outPath)") }
        defer { close(out) }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        child = try ChildProcess([executable] + arguments + ["--address", bus.address], environment: environment,
                                 stdout: out, logPath: errPath)
    }

    var stdoutText: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderrText: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) { child.signal(number) }

    /// Waits for the command to end.
    func wait(timeout: Duration = .seconds(30)) async throws -> ClientResult {
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.signal(SIGKILL)
            throw HarnessError("earshot \(arguments.joined(separator: " ")) did not end within \(timeout)\n"
                               + "stdout: \(stdoutText)\nstderr: \(stderrText)")
        }
        return ClientResult(status: status, stdout: stdoutText, stderr: stderrText)
    }

    /// Waits until stderr contains `text`.
    func waitForStderr(_ text: String, timeout: Duration = .seconds(10)) async throws {
        try await eventually("earshot's stderr to contain '\(text)'", timeout: timeout) { self.stderrText.contains(text) }
    }
}

/// Polls `condition` until it holds.
func eventually(_ what: String, timeout: Duration = .seconds(10),
                _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw HarnessError("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
