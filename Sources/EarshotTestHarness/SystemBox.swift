import Foundation
import Glibc

/// The installed system that `deploy/system-box/box up DIR` booted (`EARSHOT_SYSTEM_BOX` names
/// DIR): a Debian root with real systemd as PID 1, the system bus, Earshot installed by
/// `deploy/install`, the system-wide PipeWire, and the users `app` and `other`. Commands run
/// inside it through `nsenter` into its PID 1's namespaces, as one of its users.
public struct SystemBox: Sendable {
    /// The box's directory on the host (its root is `root/` in it).
    public let directory: URL
    /// The box's PID 1, as the host numbers it.
    public let leader: Int32

    /// The box the environment names, or nil when none does.
    public static var current: SystemBox? {
        guard let path = ProcessInfo.processInfo.environment["EARSHOT_SYSTEM_BOX"], !path.isEmpty else { return nil }
        let directory = URL(fileURLWithPath: path)
        guard let text = try? String(contentsOf: directory.appendingPathComponent("leader"), encoding: .utf8),
              let leader = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return SystemBox(directory: directory, leader: leader)
    }

    /// The box's file at `path`, seen from the host.
    public func file(_ path: String) -> URL { directory.appendingPathComponent("root").appendingPathComponent(path) }

    /// What a command printed and how it ended.
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
        public let errors: String

        public var succeeded: Bool { status == 0 }
    }

    /// The command line that runs the shell command `script` in the box as `user`, in its
    /// home, with the environment the head unit gives its users' programs.
    func commandLine(_ script: String, as user: String) -> [String] {
        let environment = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                           "PIPEWIRE_RUNTIME_DIR=/run/pipewire"]
        let inside = user == "root" ? ["/bin/sh", "-c", "cd /root && " + script]
                                    : ["/usr/sbin/runuser", "-u", user, "--", "/bin/sh", "-c", "cd ~ && " + script]
        return ["/usr/bin/nsenter", "--target", "\(leader)", "--all", "/usr/bin/env", "-i"] + environment + inside
    }

    /// Runs `script` in the box as `user` and waits for it (at most `timeout`).
    public func attempt(_ script: String, as user: String = "root", timeout: Duration = .seconds(60)) async throws -> Outcome {
        let name = "earshot-box-\(UUID().uuidString.prefix(8))"
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent(name + ".out").path
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent(name + ".err").path
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw HarnessError("cannot create \(outPath)") }
        let child = try ChildProcess(commandLine(script, as: user), environment: [:], stdout: out, logPath: errPath)
        close(out)
        guard let status = await child.waitForExit(timeout: timeout) else {
            child.signal(SIGKILL)
            _ = await child.waitForExit(timeout: .seconds(5))
            throw HarnessError("in the box, as \(user): '\(script)' did not finish within \(timeout)")
        }
        return Outcome(status: status, output: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                       errors: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    /// Runs `script` in the box as `user`; returns what it printed, or throws with its
    /// errors when it fails.
    @discardableResult
    public func run(_ script: String, as user: String = "root", timeout: Duration = .seconds(60)) async throws -> String {
        let outcome = try await attempt(script, as: user, timeout: timeout)
        guard outcome.succeeded else {
            throw HarnessError("in the box, as \(user): '\(script)' exited with \(outcome.status):\n\(outcome.errors.suffix(3000))\(outcome.output.suffix(1000))")
        }
        return outcome.output
    }

    /// A command left running in the box as a transient unit of the box's systemd, so that
    /// stopping it stops everything it started.
    public struct Unit: Sendable {
        public let box: SystemBox
        public let name: String

        /// Stops the unit and everything in it.
        public func stop() async {
            _ = try? await box.attempt("systemctl stop \(name) 2>/dev/null; true")
        }

        /// Whether it still runs.
        public func isActive() async -> Bool {
            ((try? await box.attempt("systemctl is-active --quiet \(name)"))?.succeeded) ?? false
        }

        /// What it has written (its journal).
        public func output() async -> String {
            (try? await box.attempt("journalctl --no-pager -o cat -u \(name)"))?.output ?? ""
        }
    }

    /// Starts `script` in the box as `user` (in its home, with the environment of
    /// `commandLine`) as a transient unit, and leaves it running.
    public func start(_ script: String, as user: String, name: String) async throws -> Unit {
        let unit = "earshot-box-\(name)-\(UUID().uuidString.prefix(6).lowercased())"
        let quoted = "'" + script.replacingOccurrences(of: "'", with: "'\\''") + "'"
        try await run("systemd-run --quiet --collect --unit=\(unit) -p User=\(user) -p 'WorkingDirectory=~' "
                      + "--setenv=PIPEWIRE_RUNTIME_DIR=/run/pipewire /bin/sh -c \(quoted)")
        return Unit(box: self, name: unit)
    }

    /// Runs `body` with `script` running in the box as `user` (see `start`), and stops it
    /// afterwards, whatever happens.
    public func with<T>(_ script: String, as user: String, name: String, _ body: (Unit) async throws -> T) async throws -> T {
        let unit = try await start(script, as: user, name: name)
        do {
            let result = try await body(unit)
            await unit.stop()
            return result
        } catch {
            await unit.stop()
            throw error
        }
    }

    /// Waits until `script` (run as `user`) succeeds, at most `timeout`; returns its output.
    @discardableResult
    public func waitUntil(_ script: String, as user: String = "root", timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var last: Outcome?
        while ContinuousClock.now < deadline {
            let outcome = try await attempt(script, as: user, timeout: .seconds(20))
            if outcome.succeeded { return outcome.output }
            last = outcome
            try await Task.sleep(for: .milliseconds(200))
        }
        throw HarnessError("in the box, as \(user): '\(script)' did not succeed within \(timeout): \(last?.errors.suffix(2000) ?? "")")
    }
}
