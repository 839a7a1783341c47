import Foundation
import Glibc

/// Runs a command-line tool (ffmpeg, ffprobe, sha256sum…) to completion and returns what
/// it printed on stdout; a non-zero exit is an error quoting its stderr.
public enum ToolRun {
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           timeout: Duration = .seconds(120)) async throws -> String {
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
        guard status == 0 else {
            let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            throw HarnessError("\(arguments.joined(separator: " ")) exited with \(status): \(stderr.suffix(2000))")
        }
        return stdout
    }
}
