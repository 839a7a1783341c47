import AlertsCore
import Testing

/// The PCM an alert opens carries its role wherever the PCM leads to PipeWire.
@Suite struct AlertOutputDeviceTests {
    @Test func pipewirePCMsGetTheRole() {
        #expect(AlertOutputDevice.name(for: "pipewire", role: "Emergency", type: "pipewire") == "pipewire:ROLE=Emergency")
        #expect(AlertOutputDevice.name(for: "pipewire:SERVER=pipewire-1", role: "Navigation", type: "pipewire")
                    == "pipewire:SERVER=pipewire-1,ROLE=Navigation")
        #expect(AlertOutputDevice.name(for: "pipewire:ROLE=Music", role: "Emergency", type: "pipewire") == "pipewire:ROLE=Music")
    }

    /// `default` with Debian's pipewire-alsa is a pipewire PCM: it is opened as `pipewire:`
    /// with the role, keeping the definition's server and node.
    @Test func aPCMDefinedAsPipeWireIsOpenedAsPipeWireWithTheRole() {
        #expect(AlertOutputDevice.name(for: "default", role: "Emergency", type: "pipewire",
                                       fields: ["playback_node": "-1", "capture_node": "-1"]) == "pipewire:ROLE=Emergency")
        #expect(AlertOutputDevice.name(for: "car", role: "Notification", type: "pipewire",
                                       fields: ["server": "pipewire-0", "playback_node": "speakers"])
                    == "pipewire:SERVER=pipewire-0,NODE=speakers,ROLE=Notification")
    }

    @Test func otherPCMsAreOpenedAsNamed() {
        #expect(AlertOutputDevice.name(for: "default", role: "Emergency", type: "hw") == "default")
        #expect(AlertOutputDevice.name(for: "hw:0,0", role: "Emergency", type: nil) == "hw:0,0")
        #expect(AlertOutputDevice.name(for: "default", role: "", type: "pipewire") == "default")
    }
}
