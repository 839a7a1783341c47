import EarshotContract
import EarshotDBus

/// What the session service announces (its signals), typed.
public enum SessionEvent: Sendable, Equatable {
    /// The route changed, with AVAudioSession's reason (e.g. `NewDeviceAvailable`) and the
    /// route before (Input, Output).
    case routeChanged(reason: String, previousRoute: [String: DBusValue])
    /// One of this connection's activations was interrupted (`began`) or may resume
    /// (`ended`; options carry ShouldResume).
    case interruption(type: String, options: [String: DBusValue])
    /// The capture service or the system mixer came back.
    case mediaServicesReset
    /// The kept state was applied again: why, whether it applied, the failure if not.
    case reapplied(reason: String, ok: Bool, error: String)

    /// The signal's declaration.
    public var signal: SignalDeclaration {
        typealias Manager = SessionContract.Manager
        switch self {
        case .routeChanged: return Manager.routeChanged
        case .interruption: return Manager.interruption
        case .mediaServicesReset: return Manager.mediaServicesReset
        case .reapplied: return Manager.reapplied
        }
    }

    /// The signal's arguments, in the declaration's order.
    public var arguments: [DBusValue] {
        switch self {
        case .routeChanged(let reason, let previous): [.string(reason), .vardict(previous)]
        case .interruption(let type, let options): [.string(type), .vardict(options)]
        case .mediaServicesReset: []
        case .reapplied(let reason, let ok, let error): [.string(reason), .boolean(ok), .string(error)]
        }
    }

    init?(_ signal: DBusMessage) {
        typealias Manager = SessionContract.Manager
        let body = signal.body
        switch signal.member {
        case Manager.routeChanged.name:
            guard body.count == 2, let reason = body[0].stringValue, let previous = body[1].stringKeyedValue else { return nil }
            self = .routeChanged(reason: reason, previousRoute: previous)
        case Manager.interruption.name:
            guard body.count == 2, let type = body[0].stringValue, let options = body[1].stringKeyedValue else { return nil }
            self = .interruption(type: type, options: options)
        case Manager.mediaServicesReset.name:
            self = .mediaServicesReset
        case Manager.reapplied.name:
            guard body.count == 3, let reason = body[0].stringValue, let ok = body[1].boolValue, let error = body[2].stringValue else { return nil }
            self = .reapplied(reason: reason, ok: ok, error: error)
        default:
            return nil
        }
    }
}

extension SessionProxy {
    /// The session service's signals from now on, in order (interruptions only of this
    /// connection's activations: they are unicast). Subscribed before it returns; ends
    /// when the connection closes.
    public func events() async throws -> AsyncStream<SessionEvent> {
        ClientReach.note(Manager.interface, Manager.routeChanged.name, Manager.interruption.name, Manager.mediaServicesReset.name,
                         Manager.reapplied.name)
        let signals: SignalSubscription
        do {
            signals = try await calls.connection.subscribe(MatchRule(sender: calls.busName, interface: Manager.interface.name))
        } catch {
            throw EarshotError(error)
        }
        let (events, continuation) = AsyncStream<SessionEvent>.makeStream()
        let forwarding = Task {
            for await signal in signals {
                if let event = SessionEvent(signal) { continuation.yield(event) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            signals.cancel()
            forwarding.cancel()
        }
        return events
    }
}
