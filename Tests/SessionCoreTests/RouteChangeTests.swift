import SessionCore
import Testing

@Suite struct RouteChangeTests {
    func input(_ name: String, channels: [UInt32] = [1]) -> InputDescription {
        InputDescription(name: name, description: name, channels: channels, sampleRates: [48000], dataSources: [], hardware: false)
    }

    @Test func reasons() {
        let mono = input("mono"), stereo = input("stereo", channels: [2])
        #expect(RouteChangeReason.classify(previous: [mono], current: [mono, stereo], category: .record) == .newDeviceAvailable)
        #expect(RouteChangeReason.classify(previous: [mono, stereo], current: [mono], category: .record) == .oldDeviceUnavailable)
        #expect(RouteChangeReason.classify(previous: [mono], current: [stereo], category: .record) == .oldDeviceUnavailable)
        #expect(RouteChangeReason.classify(previous: [mono], current: [], category: .playAndRecord) == .noSuitableRouteForCategory)
        #expect(RouteChangeReason.classify(previous: [mono], current: [], category: .playback) == .oldDeviceUnavailable)
        #expect(RouteChangeReason.classify(previous: [mono], current: [input("mono", channels: [1, 2])], category: .record)
            == .routeConfigurationChange)
        #expect(RouteChangeReason.classify(previous: [mono, stereo], current: [stereo, mono], category: .record) == nil)
        #expect(input("x").dataSources == ["default"])
    }
}
