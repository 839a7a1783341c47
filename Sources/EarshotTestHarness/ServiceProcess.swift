import EarshotDBus
import EarshotService
import Foundation
import Glibc

/// A service executable from the build directory, started against a private bus.
///
/// Output goes to a log file; the process runs under `setpriv --pdeathsig KILL` so it never
/// outlives the test; `stop()` (or deinit) ends it.
public final class ServiceProcess: Sendable {
    public let executable: String
    public let logURL: URL
    private let process: ChildProcess

    /// The directory holding the build's executables: the one holding this test or
    /// benchmark binary (`.build/<triple>/<configuration>`).
    public static var productsDirectory: URL {
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return me.deletingLastPathComponent()
    }

    /// One of the C plugins of `Sources/Plugins` (`libEarshotUnpluggablePCM.so`, say) in
    /// the products directory, where `make -C Sources/Plugins OUT=DIR` builds it (as
    /// `deploy/earshot-dev` does after every `swift build`).
    public static func plugin(_ fileName: String) throws -> URL {
        let library = productsDirectory.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: library.path) else {
            throw HarnessError("\(library.path) is not built: run `make -C Sources/Plugins OUT=\(productsDirectory.path)` "
                               + "(deploy/earshot-dev builds it with the package)")
        }
        return library
    }

    /// Starts `executable` (a name in the products directory, or a path) with `--address`
    /// of `bus` (unless `passAddress` is false: then only `DBUS_SESSION_BUS_ADDRESS` names
    /// it), then waits until it owns `busName` (when given). `commandPrefix` goes before the
    /// executable's path, e.g. `TestUser.commandPrefix(…)` to run it as another user.
    public init(_ executable: String, arguments: [String] = [], bus: PrivateBus, busName: String?,
                environment: [String: String] = [:], passAddress: Bool = true, commandPrefix: [String] = [],
                readyTimeout: Duration = .seconds(20)) async throws {
        self.executable = executable
        let path = executable.contains("/") ? executable : Self.productsDirectory.appendingPathComponent(executable).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError("\(path) is not built (run `swift build` first)")
        }
        logURL = bus.directory.appendingPathComponent("\((executable as NSString).lastPathComponent)-\(UUID().uuidString.prefix(8)).log")
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env.removeValue(forKey: "JOURNAL_STREAM")
        // A reply with an error the member does not declare ends the service (UndeclaredErrors).
        env["EARSHOT_UNDECLARED_ERRORS"] = "abort"
        // The allocator settings the systemd units and activation files give every service.
        if env["GLIBC_TUNABLES"] == nil { env["GLIBC_TUNABLES"] = AllocatorTunables.environmentValue }
        for (key, value) in environment { env[key] = value }
        process = try ChildProcess(commandPrefix + [path] + arguments + (passAddress ? ["--address", bus.address] : []),
                                   environment: env, logPath: logURL.path)

        guard let busName else { return }
        let watcher = try await bus.connect()
        defer { watcher.close() }
        let deadline = ContinuousClock.now + readyTimeout
        while try await watcher.nameOwner(busName) == nil {
            guard process.isRunning else {
                throw HarnessError("\(executable) exited with status \(process.exitStatus ?? -1) before owning \(busName):\n\(logText)")
            }
            guard ContinuousClock.now < deadline else {
                await shutdown()
                throw HarnessError("\(executable) did not own \(busName) within \(readyTimeout):\n\(logText)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    public var pid: Int32 { process.pid }
    public var isRunning: Bool { process.isRunning }
    /// How the process ended (as `ChildProcess.exitStatus`); nil while it runs.
    public var exitStatus: Int32? { process.exitStatus }

    /// The paths of the files the process has mapped (its executable and libraries), one
    /// per mapping, from `/proc/PID/maps`.
    public func mappedFiles() throws -> [String] {
        try Self.mappedFiles(of: pid)
    }

    /// The same for any process `pid`.
    public static func mappedFiles(of pid: pid_t) throws -> [String] {
        // Read to the end: /proc files report a size of 0.
        let maps = try FileHandle(forReadingFrom: URL(filePath: "/proc/\(pid)/maps")).readToEnd() ?? Data()
        let files = String(decoding: maps, as: UTF8.self).split(separator: "\n").compactMap { line in
            line.firstIndex(of: "/").map { String(line[$0...]) }
        }
        guard files.contains(where: { $0.contains("/libc.so") }) else {
            throw HarnessError("the maps of \(pid) name no libc: not read")
        }
        return files
    }

    /// Whether the process has a file mapped whose path contains `name`.
    public func maps(_ name: String) throws -> Bool {
        try mappedFiles().contains { $0.contains(name) }
    }

    /// The processes the service started whose command is `command` (`earshot-speak`,
    /// say), from `/proc`, zombies (ended and not yet waited for) included.
    public func children(named command: String) -> [(pid: Int32, zombie: Bool)] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> (pid: Int32, zombie: Bool)? in
            guard let child = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
            // pid (comm) state ppid …: the command may hold spaces and parentheses.
            let name = stat[stat.index(after: open)..<close]
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard name == command, fields.count > 1, Int32(fields[1]) == pid else { return nil }
            return (child, fields[0] == "Z")
        }
    }

    /// Everything the service has logged so far.
    public var logText: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Sends `signal` to the service.
    public func signal(_ signal: Int32) { process.signal(signal) }

    /// Waits for the process to exit; returns its exit status (128 + the signal number
    /// for a death by signal), or nil on timeout.
    public func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
        await process.waitForExit(timeout: timeout)
    }

    /// Stops the service (SIGTERM, then SIGKILL after five seconds) without blocking a thread.
    public func shutdown() async { await process.terminate() }

    /// Stops the service (blocking; for deinit and defer).
    public func stop() { process.stop() }

    deinit { stop() }
}
