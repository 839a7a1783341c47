import Dispatch
import EarshotDBus
import Foundation
import Glibc

/// Runs a command to its end and measures its wall time: from `posix_spawn` to `waitpid`
/// returning, with no wrapper process in between (the harness's children run under
/// `setpriv`, which would add its own start-up). Standard input and output are /dev/null.
enum TimedCommand {
    struct Outcome: Sendable {
        let nanoseconds: UInt64
        /// The exit status (128 + the signal number for a death by signal).
        let status: Int32
    }

    /// Runs `arguments` (the first one a path) on a thread outside the cooperative pool.
    static func run(_ arguments: [String]) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(arguments) })
            }
        }
    }

    private static func runBlocking(_ arguments: [String]) throws -> Outcome {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        // Dispatch's threads block some signals; the command starts with none blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let cArguments = arguments.map { strdup($0) } + [nil]
        let cEnvironment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid: pid_t = 0
        let start = monotonicNanoseconds()
        let code = posix_spawn(&pid, arguments[0], &actions, &attributes, cArguments, cEnvironment)
        guard code == 0 else {
            throw BenchmarkError("cannot start \(arguments.joined(separator: " ")): \(String(cString: strerror(code)))")
        }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            guard errno == EINTR else { throw BenchmarkError("waitpid \(pid): \(String(cString: strerror(errno)))") }
        }
        let end = monotonicNanoseconds()
        let status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return Outcome(nanoseconds: end - start, status: status)
    }
}
