import EarshotDBus
import EarshotTestSupport
import EarshotEcho
import EarshotTestHarness
import Testing

@Suite struct NameTests {
    @Test func requestingATakenNameFailsClearly() async throws {
        try await EchoFixture.with { echo in
            let error = await #expect(throws: BusNameTaken.self) {
                try await echo.client.requestName(EchoService.busName)
            }
            let owner = try await echo.client.nameOwner(EchoService.busName)
            #expect(error == BusNameTaken(name: EchoService.busName, owner: owner))
            #expect(error?.description == "the name \(EchoService.busName) is already owned by \(owner ?? "?")")
            // A free name can be taken, and given back.
            try await echo.client.requestName("org.example.Test.Free")
            #expect(try await echo.client.nameOwner("org.example.Test.Free") == echo.client.uniqueName)
            try await echo.client.releaseName("org.example.Test.Free")
            #expect(try await echo.client.nameOwner("org.example.Test.Free") == nil)
        }
    }

    @Test func watchingANameSeesItsOwnerComeAndGo() async throws {
        try await EchoFixture.with { echo in
            var owners = try await echo.client.watchNameOwner("org.example.Test.Watched").makeAsyncIterator()
            #expect(await owners.next() == .some(nil))
            let other = try await echo.bus.connect()
            try await other.requestName("org.example.Test.Watched")
            #expect(await owners.next() == .some(other.uniqueName))
            other.close()
            #expect(await owners.next() == .some(nil))
        }
    }

    @Test func theServiceIsToldWhenAPeerLeaves() async throws {
        try await EchoFixture.with { echo in
            let vanished = try await echo.client.subscribe(MatchRule(
                sender: EchoService.busName, interface: EchoService.interfaceName, member: "PeerVanished"))
            let peer = try await echo.bus.connect()
            let name = peer.uniqueName
            _ = try await peer.call(destination: EchoService.busName, path: EchoService.path,
                                    interface: EchoService.interfaceName, member: "WatchPeer", [.string(name)])
            peer.close()
            let signal = await nextSignal(vanished)
            #expect(signal?.body == [.string(name)])
        }
    }

    @Test func signalsFromAWellKnownSenderFollowItsOwner() async throws {
        try await EchoFixture.with { echo in
            // A subscription naming the service's well-known name receives its signals,
            // though they carry the unique name as sender.
            let notes = try await echo.client.subscribe(MatchRule(sender: EchoService.busName, member: "Note"))
            _ = try await echo.call("Broadcast", [.string("hi")])
            let note = try #require(await nextSignal(notes))
            #expect(note.sender == (try await echo.client.nameOwner(EchoService.busName)))
            // An impostor emitting the same signal does not match.
            let impostor = try await echo.bus.connect()
            defer { impostor.close() }
            try impostor.emitSignal(path: EchoService.path, interface: EchoService.interfaceName, member: "Note", [.string("fake")])
            #expect(await nextSignal(notes, timeout: .milliseconds(300)) == nil)
        }
    }
}
