import EarshotContract
import EarshotDBus
import EarshotService
import EarshotTestHarness
import Foundation
import Testing

/// `deploy/install` into a temporary root, as a user: the units it installs pass
/// `systemd-analyze verify`, its session activation files start services on demand, and
/// dbus-daemon accepts its system-bus policy.
@Suite struct InstallTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let services = ["capture", "alerts", "session", "pieces", "orchestrator"]

    /// Installs with `--prefix ROOT/usr` (so the paths inside the files exist), the system's
    /// configuration and debug information in ROOT/etc and ROOT/debug, from the test build's
    /// binaries; returns the prefix.
    static func install() async throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-install-\(UUID().uuidString)")
        let prefix = root.appendingPathComponent("usr")
        _ = try await ToolRun.run([packageRoot.appendingPathComponent("deploy/install").path, "--prefix", prefix.path,
                                   "--sysconfdir", root.appendingPathComponent("etc").path,
                                   "--debug-dir", root.appendingPathComponent("debug").path,
                                   "--binaries", ServiceProcess.productsDirectory.path])
        return prefix
    }

    @Test func unitsPassSystemdAnalyzeVerify() async throws {
        let prefix = try await Self.install()
        defer { try? FileManager.default.removeItem(at: prefix.deletingLastPathComponent()) }
        let runtime = prefix.deletingLastPathComponent().appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for service in Self.services {
            let system = prefix.appendingPathComponent("lib/systemd/system/earshot-\(service).service")
            let text = try String(contentsOf: system, encoding: .utf8)
            #expect(text.contains("Type=dbus"))
            #expect(text.contains("BusName=org.earshot."))
            #expect(text.contains("ExecStart=\(prefix.path)/bin/earshot-\(service) --system"))
            for hardening in ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateNetwork=yes", "RestrictAddressFamilies=AF_UNIX",
                              "Restart=on-failure"] {
                #expect(text.contains(hardening), "\(service): \(hardening)")
            }
            _ = try await ToolRun.run(["systemd-analyze", "verify", system.path])
            let user = prefix.appendingPathComponent("lib/systemd/user/earshot-\(service).service")
            // The allocator settings, which only the loader can apply in full.
            for unit in [system, user] {
                let unitText = try String(contentsOf: unit, encoding: .utf8)
                #expect(unitText.contains("Environment=GLIBC_TUNABLES=\(AllocatorTunables.environmentValue)\n"), "\(unit.path)")
            }
            _ = try await ToolRun.run(["env", "XDG_RUNTIME_DIR=\(runtime.path)", "systemd-analyze", "--user", "verify", user.path])
        }
        // earshot-pieces loads its AAC encoder from bin/../lib/earshot.
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("lib/earshot/libEarshotAACEncoder.so").path))
        #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("lib/earshot/libEarshotSpeechProcessing.so").path))
        // The services that speak start the speech helper from the same directory.
        #expect(FileManager.default.isExecutableFile(atPath: prefix.appendingPathComponent("lib/earshot/earshot-speak").path))
        let pieces = try String(contentsOf: prefix.appendingPathComponent("lib/systemd/system/earshot-pieces.service"), encoding: .utf8)
        #expect(pieces.contains("StateDirectory=earshot/pieces"))
        for name in ["Capture1", "Alerts1", "Session1", "Pieces1", "Orchestrator1"] {
            let system = try String(contentsOf: prefix.appendingPathComponent("share/dbus-1/system-services/org.earshot.\(name).service"),
                                    encoding: .utf8)
            #expect(system.contains("SystemdService=earshot-"))
            #expect(system.contains("User=earshot"))
            // Started by the bus itself (no systemd), a service gets the unit's allocator settings.
            let session = try String(contentsOf: prefix.appendingPathComponent("share/dbus-1/services/org.earshot.\(name).service"),
                                     encoding: .utf8)
            for file in [system, session] {
                #expect(file.contains("Exec=/usr/bin/env GLIBC_TUNABLES=\(AllocatorTunables.environmentValue) \(prefix.path)/bin/earshot-"))
            }
        }
    }

    @Test func sessionActivationStartsAServiceOnDemand() async throws {
        let prefix = try await Self.install()
        defer { try? FileManager.default.removeItem(at: prefix.deletingLastPathComponent()) }
        let bus = try await PrivateBus.start(serviceDirectory: prefix.appendingPathComponent("share/dbus-1/services"))
        defer { bus.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        #expect(try await client.nameOwner(AlertsContract.busName) == nil)
        // The first call starts earshot-alerts from the installed activation file.
        let reply = try await client.call(destination: AlertsContract.busName, path: "/org/earshot/Alerts1",
                                          interface: "org.freedesktop.DBus.Properties", member: "Get",
                                          [.string(AlertsContract.Manager.interface.name), .string(AlertsContract.Manager.displayLines.name)],
                                          timeout: .seconds(30))
        #expect(reply.first?.variantValue == .uint32(3))
        #expect(try await client.nameOwner(AlertsContract.busName) != nil)
        client.close()
        await bus.shutdown()
    }

    @Test func theSystemBusPolicyLoads() async throws {
        let policy = try String(contentsOf: Self.packageRoot.appendingPathComponent("dbus/org.earshot.conf"), encoding: .utf8)
        let body = try #require(policy.range(of: "<busconfig>").flatMap { start in
            policy.range(of: "</busconfig>").map { String(policy[start.upperBound..<$0.lowerBound]) }
        })
        // dbus-daemon refuses a policy naming a user that does not exist, so the service
        // user is created before the policy is installed (see deploy/install). Here it is
        // stood in for by "nobody", on a system-type bus with the project's policy after
        // the baseline of Debian's system.conf.
        let bus = try await PrivateBus.start(policy: PrivateBus.systemBaselinePolicy
                                                 + body.replacingOccurrences(of: "user=\"earshot\"", with: "user=\"nobody\""),
                                             busType: "system")
        defer { bus.stop() }
        let client = try await bus.connect()
        // Only the service user may own the names: the test's user is refused.
        await #expect(throws: DBusError.self) { try await client.requestName(PiecesContract.busName) }
        client.close()
        await bus.shutdown()
    }
    /// A staged install with the default prefix, then one with `--prefix /usr`: the policy
    /// lands where Debian's system bus reads it (`/etc/dbus-1/system.d`, or
    /// `/usr/share/dbus-1/system.d` for /usr; never `/usr/local/share`), the executables are
    /// stripped and their debug information is kept under `/usr/lib/debug/.build-id`.
    @Test func aStagedInstallPutsThePolicyWhereTheSystemBusReadsIt() async throws {
        let install = Self.packageRoot.appendingPathComponent("deploy/install").path
        for (prefix, policy) in [("/usr/local", "etc/dbus-1/system.d"), ("/usr", "usr/share/dbus-1/system.d")] {
            let stage = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-stage-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: stage) }
            _ = try await ToolRun.run([install, "--prefix", prefix, "--destdir", stage.path, "--binaries", ServiceProcess.productsDirectory.path])
            #expect(FileManager.default.fileExists(atPath: stage.appendingPathComponent("\(policy)/org.earshot.conf").path), "\(prefix)")
            #expect(!FileManager.default.fileExists(atPath: stage.appendingPathComponent("usr/local/share/dbus-1/system.d").path))
            for executable in Self.services.map({ "earshot-\($0)" }) + ["earshot"] {
                let binary = stage.appendingPathComponent(String(prefix.dropFirst()) + "/bin/\(executable)").path
                let sections = try await ToolRun.run(["readelf", "-S", "-W", binary])
                #expect(!sections.contains(".debug_info"), "\(executable) is not stripped")
                let id = try #require(try await ToolRun.run(["readelf", "-n", binary]).split(separator: "\n")
                                        .first { $0.contains("Build ID:") }?.split(separator: " ").last.map(String.init))
                let debug = stage.appendingPathComponent("usr/lib/debug/.build-id/\(id.prefix(2))/\(id.dropFirst(2)).debug").path
                #expect(try await ToolRun.run(["readelf", "-S", "-W", debug]).contains(".debug_info"), "\(executable): no debug file")
            }
        }
    }
}
