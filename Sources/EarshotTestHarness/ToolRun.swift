import Foundation
import Glibc

/// Runs a command-line tool (ffmpeg, ffprobe, sha256sum…) to completion and returns what
/// it printed on stdout; a non-zero exit is an error quoting its stderr.
public enum ToolRun {
    /// How a tool ended, with what it printed.
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
        public let errors: String
        public var succeeded: Bool { status == 0 }
    }

    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           timeout: Duration = .seconds(120)) async throws -> String {
        let outcome = try await attempt(arguments, environment: environment, timeout: timeout, whole: true)
        guard outcome.succeeded else {
            throw HarnessError("\(arguments.joined(separator: " ")) exited with \(outcome.status): \(outcome.errors.suffix(2000))")
        }
        return outcome.output
    }

    /// Runs the tool to completion, whatever its exit status; `environment` is added to
    /// the process's own.
    public static func attempt(_ arguments: [String], environment extra: [String: String], timeout: Duration = .seconds(120)) async throws -> Outcome {
        try await attempt(arguments, environment: ProcessInfo.processInfo.environment.merging(extra) { $1 }, timeout: timeout, whole: true)
    }

    private static func attempt(_ arguments: [String], environment: [String: String], timeout: Duration, whole: Bool) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory
        let name = "earshot-tool-\(UUID().uuidString)"
        let outPath = directory.appendingPathComponent(name + ".out").path
        let errPath = directory.appendingPathComponent(name + ".err").path
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw HarnessError("cannot create \(outPath)") }
        let child = try ChildProcess(arguments, environment: environment, stdout: out, logPath: errPath)
        close(out)
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.signal(SIGKILL)
            throw HarnessError("\(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return Outcome(status: status, output: stdout, errors: stderr)
    }
}
