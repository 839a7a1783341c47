import EarshotDBus
import Foundation
import Glibc

/// A private `dbus-daemon` in a temporary directory, from a generated configuration.
///
/// The daemon runs under `setpriv --pdeathsig KILL`, so it dies with the process that
/// started it even if that process crashes; `stop()` (or deinit) ends it and removes the
/// directory.
public final class PrivateBus: Sendable {
    public let directory: URL
    public let address: String
    public let configPath: URL
    /// The running daemon; `restart()` replaces it.
    private let daemon: Locked<ChildProcess>
    private var process: ChildProcess { daemon.withLock { $0 } }

    /// Starts a daemon and waits (without blocking a thread) until it accepts connections.
    /// `serviceDirectory` adds a `<servicedir>` for activation tests; `policy` replaces
    /// the default allow-everything `<policy>` elements; `busType` is the `<type>`
    /// (session or system).
    public static func start(serviceDirectory: URL? = nil, policy: String? = nil,
                             busType: String = "session") async throws -> PrivateBus {
        let bus = try PrivateBus(serviceDirectory: serviceDirectory, policy: policy, busType: busType)
        do {
            try await bus.waitUntilReady()
        } catch {
            await bus.shutdown()
            throw error
        }
        return bus
    }

    /// Starts a new daemon with the same configuration at the same address (after `kill()`,
    /// say, as a supervisor restarting a crashed bus would; a running daemon is stopped
    /// first) and waits until it accepts connections. Names and connections of the old
    /// daemon are gone; the directory and its files stay.
    public func restart() async throws {
        await process.terminate()
        let replacement = try Self.launchDaemon(configPath: configPath, directory: directory)
        daemon.withLock { $0 = replacement }
        try await waitUntilReady()
    }

    /// Waits until the daemon's socket accepts a connection.
    private func waitUntilReady() async throws {
        let socket = directory.appendingPathComponent("bus").path
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if FileManager.default.fileExists(atPath: socket), let probe = try? await DBusConnection.connect(.address(address)) {
                probe.close()
                return
            }
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw HarnessError("dbus-daemon did not start: \(logText)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    private static func launchDaemon(configPath: URL, directory: URL) throws -> ChildProcess {
        try ChildProcess(["/usr/bin/dbus-daemon", "--config-file=" + configPath.path, "--nofork", "--nopidfile"],
                         // Services it starts by activation abort on an undeclared error, as
                         // those the harness starts do (ServiceProcess).
                         environment: ProcessInfo.processInfo.environment.merging(["EARSHOT_UNDECLARED_ERRORS": "abort"]) { $1 },
                         logPath: directory.appendingPathComponent("dbus-daemon.log").path)
    }

    private init(serviceDirectory: URL?, policy: String?, busType: String) throws {
        directory = try Self.makeTemporaryDirectory(prefix: "earshot-bus")
        let socket = directory.appendingPathComponent("bus")
        address = "unix:path=" + socket.path
        configPath = directory.appendingPathComponent("bus.conf")
        let defaultPolicy = """
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                <allow user="*"/>
              </policy>
            """
        // The limits Debian's session.conf sets; without them dbus-daemon keeps the strict
        // system-bus defaults (e.g. 128 pending replies per connection).
        let sessionLimits = busType != "session" ? "" : """
              <limit name="max_incoming_bytes">1000000000</limit>
              <limit name="max_incoming_unix_fds">250000000</limit>
              <limit name="max_outgoing_bytes">1000000000</limit>
              <limit name="max_outgoing_unix_fds">250000000</limit>
              <limit name="max_message_size">1000000000</limit>
              <limit name="service_start_timeout">120000</limit>
              <limit name="auth_timeout">240000</limit>
              <limit name="pending_fd_timeout">150000</limit>
              <limit name="max_completed_connections">100000</limit>
              <limit name="max_incomplete_connections">10000</limit>
              <limit name="max_connections_per_user">100000</limit>
              <limit name="max_pending_service_starts">10000</limit>
              <limit name="max_names_per_connection">50000</limit>
              <limit name="max_match_rules_per_connection">50000</limit>
              <limit name="max_replies_per_connection">50000</limit>
            """
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>\(busType)</type>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
            \(serviceDirectory.map { "  <servicedir>\($0.path)</servicedir>" } ?? "")
            \(policy ?? defaultPolicy)
            \(sessionLimits)
            </busconfig>

            """
        try config.write(to: configPath, atomically: true, encoding: .utf8)

        daemon = Locked(try Self.launchDaemon(configPath: configPath, directory: directory))

    }

    /// The default-context rules of Debian's `system.conf`, a system bus's baseline: anyone
    /// may connect, talk to the bus itself, send signals and replies, and receive anything,
    /// but nobody may own a name or call a method unless a later policy allows it. A
    /// system-type bus's `policy` is this followed by the services' own policy.
    public static let systemBaselinePolicy = """
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
          </policy>
        """

    /// The daemon's process id.
    public var pid: Int32 { process.pid }

    public var isRunning: Bool { process.isRunning }

    /// What the daemon logged.
    public var logText: String {
        (try? String(contentsOf: directory.appendingPathComponent("dbus-daemon.log"), encoding: .utf8)) ?? ""
    }

    /// A new private connection to this bus.
    public func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(.address(address))
    }

    /// Kills the daemon at once (SIGKILL), as a crash would.
    public func kill() {
        process.signal(SIGKILL)
        _ = process.waitForExitBlocking(timeout: .seconds(5))
    }

    /// Stops the daemon and removes its directory, without blocking a thread.
    public func shutdown() async {
        await process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the daemon and removes its directory (blocking; for deinit and defer).
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    static func makeTemporaryDirectory(prefix: String) throws -> URL {
        var template = Array((NSTemporaryDirectory() + "/\(prefix).XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw HarnessError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        return URL(fileURLWithPath: String(cString: made))
    }

    static func createFile(_ url: URL) throws -> String {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw HarnessError("cannot create \(url.path)")
        }
        return url.path
    }
}

public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
