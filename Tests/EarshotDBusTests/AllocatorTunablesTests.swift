import EarshotEcho
@testable import EarshotService
import EarshotTestHarness
import Foundation
import Testing

/// `AllocatorTunables`: every service starts itself again once with glibc's per-thread
/// caches off and at most two arenas, keeping its pid and its name, unless GLIBC_TUNABLES
/// already names those tunables.
@Suite struct AllocatorTunablesTests {
    static let both = "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=2"

    @Test func theTunablesAreAddedUnlessAlreadySet() {
        #expect(AllocatorTunables.tunables(adding: nil) == Self.both)
        #expect(AllocatorTunables.tunables(adding: "") == Self.both)
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.trim_threshold=1048576")
                == "glibc.malloc.trim_threshold=1048576:" + Self.both)
        // Only what is missing is added; what is named keeps its value.
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.tcache_count=7")
                == "glibc.malloc.tcache_count=7:glibc.malloc.arena_max=2")
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.arena_max=8")
                == "glibc.malloc.arena_max=8:glibc.malloc.tcache_count=0")
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.arena_max=4:glibc.malloc.tcache_count=3") == nil)
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.mmap_threshold=4096:" + Self.both) == nil)
        // A longer name that only starts alike is another tunable.
        #expect(AllocatorTunables.tunables(adding: "glibc.malloc.tcache_count_x=1")
                == "glibc.malloc.tcache_count_x=1:" + Self.both)
    }

    /// The process's name.
    private func name(_ service: ServiceProcess) throws -> String {
        try String(contentsOfFile: "/proc/\(service.pid)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: [
        (nil, both),
        ("glibc.malloc.trim_threshold=1048576", "glibc.malloc.trim_threshold=1048576:" + both),
        ("glibc.malloc.tcache_count=7:glibc.malloc.arena_max=8", "glibc.malloc.tcache_count=7:glibc.malloc.arena_max=8"),
    ] as [(String?, String)])
    func aServiceRunsWithTheTunablesUnlessTold(given: String?, expected: String) async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName,
                                               environment: given.map { ["GLIBC_TUNABLES": $0] } ?? [:])
        defer { service.stop() }
        // As the service sees it, which it logs at start.
        #expect(service.logText.contains("GLIBC_TUNABLES=\(expected)\n"), "log:\n\(service.logText)")
        // Started again under its own name and pid (the one that owns the bus name).
        #expect(try name(service) == "earshot-echo")
        let client = try await bus.connect()
        defer { client.close() }
        let owner = try await client.nameOwner(EchoService.busName)
        let ownerPid = try await client.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                             interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                             [.string(try #require(owner))]).first?.uint32Value
        #expect(ownerPid == UInt32(service.pid))
    }

    /// A process that has started again once does not do it a second time, even if the
    /// setting did not reach it.
    @Test func neverMoreThanOnce() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let service = try await ServiceProcess("earshot-echo", bus: bus, busName: EchoService.busName,
                                               environment: [AllocatorTunables.restarted: "1"])
        defer { service.stop() }
        #expect(!service.logText.contains("GLIBC_TUNABLES="), "log:\n\(service.logText)")
        #expect(try name(service) == "earshot-echo")
    }
}
