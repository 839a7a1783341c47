import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct KeepEnforcedTests {
    /// The next signal's arguments, or a recorded issue.
    func next(_ subscription: SignalSubscription, _ what: String) async throws -> [DBusValue] {
        try #require(await subscription.next(timeout: .seconds(10)), "no \(what) within 10 s").body
    }

    /// With inotify, and with the polling fallback.
    @Test(arguments: ["inotify", "poll"])
    func addingAndRemovingThePreferredInput(routeWatch: String) async throws {
        try await SessionFixture.with(arguments: ["--route-watch", routeWatch]) { session in
            await expectDBusError("org.earshot.Error.InvalidInputType") {
                try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("usb_mic"),
                                                   "PolarPattern": .string("stereo")])
            }
            // From here on (the category change above was announced before the reply).
            let routes = try await session.subscribe("RouteChanged")
            let reapplied = try await session.subscribe("Reapplied")
            #expect(try await session.state()["Route"]?.stringKeyedValue?["Input"]?.stringValue == "")

            try session.rewriteDevices(extra: [("usb_mic", 2)])
            let arrived = try await next(routes, "RouteChanged")
            #expect(arrived.first?.stringValue == "NewDeviceAvailable")
            #expect(arrived[1].stringKeyedValue?["Input"]?.stringValue == "")
            let first = try await next(reapplied, "Reapplied")
            #expect(first == [.string("routeChange"), .boolean(true), .string("")])
            let state = try await session.state()
            #expect(state["Route"]?.stringKeyedValue?["Input"]?.stringValue == "usb_mic")
            #expect(state["Channels"]?.uint32Value == 2)

            try session.rewriteDevices(extra: [])
            let left = try await next(routes, "RouteChanged")
            #expect(left.first?.stringValue == "OldDeviceUnavailable")
            #expect(left[1].stringKeyedValue?["Input"]?.stringValue == "usb_mic")
            let second = try await next(reapplied, "Reapplied")
            #expect(second.first?.stringValue == "routeChange")
            #expect(second[1].boolValue == false)
            #expect(second[2].stringValue?.hasPrefix("org.earshot.Error.InvalidInputType: PreferredInput: 'usb_mic'") == true,
                    "\(second[2])")
            #expect(try await session.state()["Route"]?.stringKeyedValue?["Input"]?.stringValue == "")
            #expect(session.service.isRunning)
        }
    }

    @Test func aRecordingCategoryLeftWithoutInputs() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("mono_mic")])
            let routes = try await session.subscribe("RouteChanged")
            try ALSATestDevices(configPath: session.bus.directory.appendingPathComponent("asound.conf")).write()
            let change = try await next(routes, "RouteChanged")
            #expect(change.first?.stringValue == "NoSuitableRouteForCategory")
            #expect(change[1].stringKeyedValue?["Input"]?.stringValue == "mono_mic")
        }
    }

    @Test func withoutKeepEnforcedNothingIsReapplied() async throws {
        try await SessionFixture.with { session in
            try await session.setProperty("KeepEnforced", .boolean(false))
            await expectDBusError("org.earshot.Error.InvalidInputType") {
                try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("usb_mic")])
            }
            let routes = try await session.subscribe("RouteChanged")
            let reapplied = try await session.subscribe("Reapplied")
            try session.rewriteDevices(extra: [("usb_mic", 1)])
            #expect(try await next(routes, "RouteChanged").first?.stringValue == "NewDeviceAvailable")
            #expect(await reapplied.next(timeout: .milliseconds(500)) == nil)
            #expect(try await session.state()["Route"]?.stringKeyedValue?["Input"]?.stringValue == "")
        }
    }

    @Test func theCaptureServiceRestartingIsAMediaServicesReset() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(["Category": .string("record"), "PreferredInput": .string("mono_mic")])
            let resets = try await session.subscribe("MediaServicesReset")
            let reapplied = try await session.subscribe("Reapplied")
            // A stand-in: the real capture service on ALSA's null device, killed and started again.
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null"], bus: session.bus,
                                                   busName: "org.earshot.Capture1")
            defer { capture.stop() }
            // Its first arrival is not a reset.
            #expect(await resets.next(timeout: .milliseconds(300)) == nil)
            capture.signal(SIGKILL)
            _ = await capture.waitForExit()
            let again = try await ServiceProcess("earshot-capture", arguments: ["--device", "null"], bus: session.bus,
                                                 busName: "org.earshot.Capture1")
            defer { again.stop() }
            #expect(await resets.next(timeout: .seconds(10)) != nil)
            #expect(try await next(reapplied, "Reapplied") == [.string("mediaServicesReset"), .boolean(true), .string("")])
            await again.shutdown()
        }
    }
}
