import EarshotDBus
import Foundation
import Glibc

/// A child process started with `posix_spawn`, with an empty signal mask and default
/// signal dispositions (Foundation's Process passes on the spawning thread's mask, and
/// libdispatch worker threads block SIGTERM), under `setpriv --pdeathsig KILL` so that it
/// dies with the process that started it (spawned from `SpawnThread`, which lives as long
/// as the process). Output goes to `logPath`.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let status = Locked<Int32?>(nil)

    /// Starts `arguments[0]` (a path) with `arguments`, `environment`, stdin from `stdin`
    /// (a descriptor, e.g. a pipe's reading end) or else /dev/null, stdout to `stdout` or
    /// else appended to `logPath` like stderr.
    public init(_ arguments: [String], environment: [String: String], stdin: Int32? = nil, stdout: Int32? = nil,
                logPath: String) throws {
        pid = try Self.spawn(arguments, environment: environment, stdin: stdin, stdout: stdout, logPath: logPath)
    }

    /// Spawns `arguments` the same way and returns its pid, leaving waiting and reaping to
    /// the caller: stdin from `stdin` or else /dev/null, stdout to `stdout` (a descriptor,
    /// e.g. a pipe's writing end) or else `logPath`, stderr to `logPath`.
    public static func spawn(_ arguments: [String], environment: [String: String], stdin: Int32? = nil, stdout: Int32? = nil,
                             logPath: String) throws -> pid_t {
        let argv = ["/usr/bin/setpriv", "--pdeathsig", "KILL"] + arguments
        let (child, code) = SpawnThread.shared.run {
            spawnNow(argv, environment: environment, stdin: stdin, stdout: stdout, logPath: logPath)
        }
        guard code == 0 else { throw HarnessError("cannot start \(arguments.joined(separator: " ")): \(String(cString: strerror(code)))") }
        return child
    }

    private static func spawnNow(_ argv: [String], environment: [String: String], stdin: Int32?, stdout: Int32?,
                                 logPath: String) -> (pid: pid_t, error: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let stdout {
            posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArgs.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, argv[0], &actions, &attributes, cArgs, cEnv)
        return (child, result)
    }

    /// The exit status once the child has ended (128 + signal for a death by signal).
    public var exitStatus: Int32? {
        status.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            guard result == pid else { return nil }
            let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            known = code
            return code
        }
    }

    public var isRunning: Bool { exitStatus == nil }

    public func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits for the child to end, polling; nil if it is still running at the deadline.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let code = exitStatus { return code }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Blocking variant for deinit and other synchronous contexts.
    public func waitForExitBlocking(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let code = exitStatus { return code }
            guard ContinuousClock.now < deadline else { return nil }
            usleep(5_000)
        }
    }

    /// SIGTERM, then SIGKILL if it has not ended after `grace`; reaps the child. Waits
    /// without blocking a thread of the cooperative pool.
    public func terminate(grace: Duration = .seconds(5)) async {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = await waitForExit(timeout: .seconds(5))
        }
    }

    /// Blocking variant of `terminate`, for deinit and other synchronous contexts.
    public func stop(grace: Duration = .seconds(3)) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if waitForExitBlocking(timeout: grace) == nil {
            kill(pid, SIGKILL)
            _ = waitForExitBlocking(timeout: .seconds(5))
        }
    }
}
