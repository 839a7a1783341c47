import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import EarshotTestSupport
import Foundation
import Testing

@Suite struct KeepEnforcedTests {
    /// The next `signal`'s arguments, or a recorded issue.
    func next(_ subscription: SignalSubscription, _ signal: SignalDeclaration) async throws -> [DBusValue] {
        try #require(await subscription.next(timeout: .seconds(10)), "no \(signal.name) within 10 s").body
    }

    /// With inotify, and with the polling fallback.
    @Test(arguments: ["inotify", "poll"])
    func addingAndRemovingThePreferredInput(routeWatch: String) async throws {
        try await SessionFixture.with(arguments: ["--route-watch", routeWatch]) { session in
            await expectDBusError(EarshotErrorName.invalidInputType.name) {
                try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "usb_mic", polarPattern: "stereo"))
            }
            // From here on (the category change above was announced before the reply).
            let routes = try await session.subscribe(Session.routeChanged)
            let reapplied = try await session.subscribe(Session.reapplied)
            #expect(try await session.state().input == "")

            try session.rewriteDevices(extra: [("usb_mic", 2)])
            let arrived = try await next(routes, Session.routeChanged)
            #expect(arrived.first?.stringValue == "NewDeviceAvailable")
            #expect(arrived[1].stringKeyedValue?[Session.RouteKeys.input]?.stringValue == "")
            let first = try await next(reapplied, Session.reapplied)
            #expect(first == [.string("routeChange"), .boolean(true), .string("")])
            let state = try await session.state()
            #expect(state.input == "usb_mic")
            #expect(state.channels == 2)

            try session.rewriteDevices(extra: [])
            let left = try await next(routes, Session.routeChanged)
            #expect(left.first?.stringValue == "OldDeviceUnavailable")
            #expect(left[1].stringKeyedValue?[Session.RouteKeys.input]?.stringValue == "usb_mic")
            let second = try await next(reapplied, Session.reapplied)
            #expect(second.first?.stringValue == "routeChange")
            #expect(second[1].boolValue == false)
            #expect(second[2].stringValue?.hasPrefix("\(EarshotErrorName.invalidInputType.name): \(SessionContract.Manager.Keys.preferredInput.name): 'usb_mic'") == true,
                    "\(second[2])")
            #expect(try await session.state().input == "")
            #expect(session.service.isRunning)
        }
    }

    @Test func aRecordingCategoryLeftWithoutInputs() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "mono_mic"))
            let routes = try await session.subscribe(Session.routeChanged)
            try ALSATestDevices(configPath: session.bus.directory.appendingPathComponent("asound.conf")).write()
            let change = try await next(routes, Session.routeChanged)
            #expect(change.first?.stringValue == "NoSuitableRouteForCategory")
            #expect(change[1].stringKeyedValue?[Session.RouteKeys.input]?.stringValue == "mono_mic")
        }
    }

    @Test func withoutKeepEnforcedNothingIsReapplied() async throws {
        try await SessionFixture.with { session in
            try await session.proxy.write(.keepEnforced, false)
            await expectDBusError(EarshotErrorName.invalidInputType.name) {
                try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "usb_mic"))
            }
            let routes = try await session.subscribe(Session.routeChanged)
            let reapplied = try await session.subscribe(Session.reapplied)
            try session.rewriteDevices(extra: [("usb_mic", 1)])
            #expect(try await next(routes, Session.routeChanged).first?.stringValue == "NewDeviceAvailable")
            #expect(await reapplied.next(timeout: .milliseconds(500)) == nil)
            #expect(try await session.state().input == "")
        }
    }

    @Test func theCaptureServiceRestartingIsAMediaServicesReset() async throws {
        try await SessionFixture.with { session in
            try await session.setDesiredState(DesiredSessionState(category: "record", preferredInput: "mono_mic"))
            let resets = try await session.subscribe(Session.mediaServicesReset)
            let reapplied = try await session.subscribe(Session.reapplied)
            // A stand-in: the real capture service on ALSA's null device, killed and started again.
            let capture = try await ServiceProcess("earshot-capture", arguments: ["--device", "null"], bus: session.bus,
                                                   busName: CaptureContract.busName)
            defer { capture.stop() }
            // Its first arrival is not a reset.
            #expect(await resets.next(timeout: .milliseconds(300)) == nil)
            capture.signal(SIGKILL)
            _ = await capture.waitForExit()
            let again = try await ServiceProcess("earshot-capture", arguments: ["--device", "null"], bus: session.bus,
                                                 busName: CaptureContract.busName)
            defer { again.stop() }
            #expect(await resets.next(timeout: .seconds(10)) != nil)
            #expect(try await next(reapplied, Session.reapplied) == [.string("mediaServicesReset"), .boolean(true), .string("")])
            await again.shutdown()
        }
    }
}
