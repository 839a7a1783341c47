import EarshotEcho
@testable import EarshotService
import EarshotTestHarness
import Foundation
import Testing

/// `AllocatorTunables`: the units and activation files give every service glibc's
/// per-thread caches off and at most two arenas; a service started without them sets what
/// it can in-process, says what it could not, and never starts itself again.
@Suite struct AllocatorTunablesTests {
    static let both = "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=2"

    @Test func whatIsMissingIsWhatTheTunablesDoNotName() {
        #expect(AllocatorTunables.environmentValue == Self.both)
        #expect(AllocatorTunables.missing(from: nil) == AllocatorTunables.settings)
        #expect(AllocatorTunables.missing(from: "") == AllocatorTunables.settings)
        #expect(AllocatorTunables.missing(from: "glibc.malloc.trim_threshold=1048576") == AllocatorTunables.settings)
        // A tunable that is named keeps its value.
        #expect(AllocatorTunables.missing(from: "glibc.malloc.tcache_count=7") == ["glibc.malloc.arena_max=2"])
        #expect(AllocatorTunables.missing(from: "glibc.malloc.arena_max=8") == ["glibc.malloc.tcache_count=0"])
        #expect(AllocatorTunables.missing(from: "glibc.malloc.arena_max=4:glibc.malloc.tcache_count=3").isEmpty)
        #expect(AllocatorTunables.missing(from: "glibc.malloc.mmap_threshold=4096:" + Self.both).isEmpty)
        // A longer name that only starts alike is another tunable.
        #expect(AllocatorTunables.missing(from: "glibc.malloc.tcache_count_x=1") == AllocatorTunables.settings)
    }

    /// The environment the process was started with (after an `exec` of itself with the
    /// settings added, they would be in it).
    private func startEnvironment(_ service: ServiceProcess) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(service.pid)/environ"))
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aServiceStartedWithTheSettingsLogsThem() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        // The harness starts services as the units do.
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName)
        defer { service.stop() }
        #expect(service.logText.contains("GLIBC_TUNABLES=\(Self.both)\n"), "log:\n\(service.logText)")
        #expect(!service.logText.contains("started without"), "log:\n\(service.logText)")
    }

    @Test(arguments: [
        ("", ["glibc.malloc.tcache_count=0"]),
        ("glibc.malloc.tcache_count=7", []),
        ("glibc.malloc.arena_max=8", ["glibc.malloc.tcache_count=0"]),
    ] as [(String, [String])])
    func aServiceStartedWithoutThemRunsAsStartedAndSaysWhatItLacks(given: String, unset: [String]) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName,
                                               environment: ["GLIBC_TUNABLES": given])
        defer { service.stop() }
        // Not started again with other settings: its environment is the one it was given.
        #expect(try startEnvironment(service).filter { $0.hasPrefix("GLIBC_TUNABLES=") } == ["GLIBC_TUNABLES=\(given)"])
        if unset.isEmpty {
            #expect(!service.logText.contains("started without"), "log:\n\(service.logText)")
        } else {
            // arena_max is set in-process; the per-thread caches cannot be.
            #expect(service.logText.contains("started without \(unset.joined(separator: ", ")) in GLIBC_TUNABLES"),
                    "log:\n\(service.logText)")
        }
    }
}
