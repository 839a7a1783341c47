/// Why the route changed, with AVAudioSession's names for the reasons.
public enum RouteChangeReason: String, Sendable, CaseIterable {
    case newDeviceAvailable = "NewDeviceAvailable"
    case oldDeviceUnavailable = "OldDeviceUnavailable"
    case categoryChange = "CategoryChange"
    case override = "Override"
    case wakeFromSleep = "WakeFromSleep"
    case noSuitableRouteForCategory = "NoSuitableRouteForCategory"
    case routeConfigurationChange = "RouteConfigurationChange"

    /// The reason for a rescan that found `current` inputs where there were `previous`,
    /// or nil when nothing a client could notice changed.
    ///
    /// - A recording category left without any input: `NoSuitableRouteForCategory`.
    /// - An input gone: `OldDeviceUnavailable` (it matters more than one arriving).
    /// - An input new: `NewDeviceAvailable`.
    /// - The same inputs with other capabilities: `RouteConfigurationChange`.
    public static func classify(previous: [InputDescription], current: [InputDescription],
                                category: SessionCategory) -> RouteChangeReason? {
        let before = Set(previous.map(\.name))
        let after = Set(current.map(\.name))
        if category.records, after.isEmpty, !before.isEmpty { return .noSuitableRouteForCategory }
        if !before.subtracting(after).isEmpty { return .oldDeviceUnavailable }
        if !after.subtracting(before).isEmpty { return .newDeviceAvailable }
        let sortedBefore = previous.sorted { $0.name < $1.name }
        let sortedAfter = current.sorted { $0.name < $1.name }
        return sortedBefore == sortedAfter ? nil : .routeConfigurationChange
    }
}
