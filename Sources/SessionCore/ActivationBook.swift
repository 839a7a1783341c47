/// Audio focus: who holds an activation, and who is interrupted or ducked by whom.
///
/// A non-mixable activation interrupts the other active non-mixable ones; one with
/// `duckOthers` ducks every other activation. When the last activation interrupting
/// another ends, that one's interruption ends with `shouldResume`.
public struct ActivationBook: Sendable {
    public struct Activation: Sendable, Equatable {
        public let id: UInt64
        public let owner: String
        public let configuration: CategoryConfiguration
        public fileprivate(set) var interruptedBy: Set<UInt64> = []
        public fileprivate(set) var duckedBy: Set<UInt64> = []

        public var interrupted: Bool { !interruptedBy.isEmpty }
        public var ducked: Bool { !duckedBy.isEmpty }
    }

    public enum Event: Sendable, Equatable {
        case interruptionBegan(UInt64, by: UInt64)
        case interruptionEnded(UInt64, shouldResume: Bool)
        case duckingChanged(UInt64, ducked: Bool)
    }

    public private(set) var activations: [UInt64: Activation] = [:]

    public init() {}

    public subscript(id: UInt64) -> Activation? { activations[id] }

    /// The most activations one owner may hold at once, and all owners together: each is
    /// an object on the bus and a party to every other's interruptions and ducking.
    public static let limitPerOwner = 32
    public static let limit = 256

    /// Why another activation for `owner` would be refused, or nil when it may have one.
    public func refusal(forAnotherOf owner: String) -> String? {
        if activations.count >= Self.limit {
            return "there are already \(Self.limit) activations, the most the session keeps at once"
        }
        if activations.values.lazy.filter({ $0.owner == owner }).count >= Self.limitPerOwner {
            return "\(owner) already holds \(Self.limitPerOwner) activations, the most one client may; deactivate one first"
        }
        return nil
    }

    /// Adds an activation and returns what it does to the others, in id order.
    public mutating func activate(id: UInt64, owner: String, configuration: CategoryConfiguration) -> [Event] {
        precondition(activations[id] == nil, "activation \(id) exists")
        var events: [Event] = []
        for otherID in activations.keys.sorted() {
            guard var other = activations[otherID] else { continue }
            if !configuration.mixable, !other.configuration.mixable {
                if other.interruptedBy.isEmpty { events.append(.interruptionBegan(otherID, by: id)) }
                other.interruptedBy.insert(id)
            }
            if configuration.ducksOthers, !other.interrupted {
                if other.duckedBy.isEmpty { events.append(.duckingChanged(otherID, ducked: true)) }
                other.duckedBy.insert(id)
            }
            activations[otherID] = other
        }
        activations[id] = Activation(id: id, owner: owner, configuration: configuration)
        return events
    }

    /// Ends an activation and returns what that does to the others.
    public mutating func deactivate(id: UInt64) -> [Event] {
        guard activations.removeValue(forKey: id) != nil else { return [] }
        var events: [Event] = []
        for otherID in activations.keys.sorted() {
            guard var other = activations[otherID] else { continue }
            if other.interruptedBy.remove(id) != nil, other.interruptedBy.isEmpty {
                events.append(.interruptionEnded(otherID, shouldResume: true))
            }
            if other.duckedBy.remove(id) != nil, other.duckedBy.isEmpty {
                events.append(.duckingChanged(otherID, ducked: false))
            }
            activations[otherID] = other
        }
        return events
    }

    /// Ends every activation `owner` holds (it left the bus); returns the ids ended and
    /// the events for the others.
    public mutating func ownerVanished(_ owner: String) -> (ended: [UInt64], events: [Event]) {
        let owned = activations.values.filter { $0.owner == owner }.map(\.id).sorted()
        var events: [Event] = []
        for id in owned {
            events.append(contentsOf: deactivate(id: id))
        }
        return (owned, events.filter { event in
            switch event {
            case .interruptionBegan(let id, _), .interruptionEnded(let id, _), .duckingChanged(let id, _):
                !owned.contains(id)
            }
        })
    }
}
