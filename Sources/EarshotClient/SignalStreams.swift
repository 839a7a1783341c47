import EarshotContract
import EarshotDBus

extension ServiceCalls {
    /// A signal of this service (from the object at `path` when given) as a sequence of
    /// `decode`'s values (those it returns nil for are skipped); the subscription ends when
    /// the sequence is dropped or the connection closes.
    func signals<Element: Sendable>(_ interface: InterfaceDeclaration, _ signal: SignalDeclaration, path: ObjectPath? = nil,
                                    _ decode: @escaping @Sendable ([DBusValue]) -> Element?) async throws(EarshotError) -> AsyncStream<Element> {
        ClientReach.note(interface, signal.name)
        let subscription: SignalSubscription
        do {
            subscription = try await connection.subscribe(MatchRule(sender: busName, interface: interface.name, member: signal.name,
                                                                    path: path))
        } catch {
            throw EarshotError(error)
        }
        let (elements, continuation) = AsyncStream<Element>.makeStream()
        let forwarding = Task {
            for await message in subscription {
                if let element = decode(message.body) { continuation.yield(element) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            subscription.cancel()
            forwarding.cancel()
        }
        return elements
    }
}

extension AlertControl {
    /// The ids of the `KEEP_CONTEXT` and `STEAL_FOCUS` buttons pressed on this alert
    /// (`ButtonPressed`; the alert stays).
    public func buttonPresses() async throws -> AsyncStream<UInt16> {
        try await calls.signals(AlertsContract.Alert.interface, AlertsContract.Alert.buttonPressed, path: path) { body in
            body.first?.uint16Value
        }
    }
}

extension PresentedAlert {
    /// The ids of the `KEEP_CONTEXT` and `STEAL_FOCUS` buttons pressed on this alert.
    public func buttonPresses() async throws -> AsyncStream<UInt16> {
        try await AlertControl(path: path, calls: calls).buttonPresses()
    }
}

/// A watched service came or went (`ServiceChanged`).
public struct ServiceChange: Sendable, Equatable {
    /// Its well-known name.
    public let name: String
    public let running: Bool
}

extension OrchestratorProxy {
    /// The watched services as they come and go.
    public func serviceChanges() async throws -> AsyncStream<ServiceChange> {
        try await calls.signals(Manager.interface, Manager.serviceChanged) { body in
            guard body.count == 2, let name = body[0].stringValue, let running = body[1].boolValue else { return nil }
            return ServiceChange(name: name, running: running)
        }
    }
}
