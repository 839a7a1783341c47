import EarshotContract
import EarshotDBus
import Logging

/// Claims on the audio session held while some work runs (an alert's audio, a pass-thru):
/// an activation of `org.earshot.Session1` per piece of work, when that service is on the
/// bus. Without it, or when it refuses, the work goes on all the same.
///
/// A claim is asked for in the background; a release that comes before the answer ends
/// the activation as soon as it arrives.
public final class SessionClaims: Sendable {
    private enum Claim {
        case pending
        case held(ObjectPath)
        case released
    }

    private let session: SessionClient
    private let logger: Logger
    /// What a claim is for, in log lines ("alert", "pass-thru").
    private let subject: String
    private let claims = Locked<[UInt64: Claim]>([:])

    public init(connection: DBusConnection, subject: String, logger: Logger) {
        session = SessionClient(connection: connection)
        self.subject = subject
        self.logger = logger
    }

    /// Claims audio for the work `id` with `category` and `options`, in the background;
    /// the task returned ends once the session has answered (or at once without one).
    @discardableResult
    public func claim(for id: UInt64, category: String, options: [String] = []) -> Task<Void, Never> {
        claims.withLock { $0[id] = .pending }
        return Task { await obtain(for: id, category: category, options: options) }
    }

    /// Waits until `claim` (from `claim(for:…)`) has been answered, but no longer than
    /// `limit`: work that should start after the mixer has made room for it, and must not
    /// wait long for a slow session.
    public static func answer(of claim: Task<Void, Never>, within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await claim.value }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Claims audio for the work `id` and returns once the session has answered (it has
    /// applied the claim to the system mixer by then), or at once without a session.
    public func claimNow(for id: UInt64, category: String, options: [String] = []) async {
        claims.withLock { $0[id] = .pending }
        await obtain(for: id, category: category, options: options)
    }

    /// Calls `handler` with the work's id when the session interrupts a claim (another
    /// client's non-mixable activation): `Interruption` `began`, unicast to this
    /// connection, naming the claim's activation. Call once, at start.
    public func watchInterruptions(_ handler: @escaping @Sendable (UInt64) -> Void) async {
        let subscription: SignalSubscription
        do {
            subscription = try await session.connection.subscribe(
                MatchRule(sender: SessionContract.busName, interface: SessionContract.Manager.interface.name,
                          member: SessionContract.Manager.interruption.name))
        } catch {
            logger.warning("cannot follow the audio session's interruptions: \(error)")
            return
        }
        Task { [claims, logger, subject] in
            for await message in subscription {
                guard message.body.first?.stringValue == "began",
                      let activation = message.body.dropFirst().first?.stringKeyedValue?[SessionContract.Manager.InterruptionKeys.activation]?.objectPathValue else { continue }
                let id = claims.withLock { claims in
                    claims.first { _, claim in
                        if case .held(let path) = claim { path == activation } else { false }
                    }?.key
                }
                guard let id else { continue }
                logger.info("\(subject) \(id): the audio session interrupted it (\(activation))")
                handler(id)
            }
        }
    }

    private func obtain(for id: UInt64, category: String, options: [String]) async {
        do {
            guard let path = try await session.activate(category: category, options: options) else {
                claims.withLock { _ = $0.removeValue(forKey: id) }
                return
            }
            let releasedMeanwhile = claims.withLock { claims -> Bool in
                if case .released = claims[id] {
                    claims.removeValue(forKey: id)
                    return true
                }
                claims[id] = .held(path)
                return false
            }
            if releasedMeanwhile {
                await session.deactivate(path)
            } else {
                logger.debug("\(subject) \(id): holding audio session activation \(path)")
            }
        } catch {
            claims.withLock { _ = $0.removeValue(forKey: id) }
            logger.warning("\(subject) \(id): the audio session refused \(category): \(error); going on without it")
        }
    }

    /// Ends the claim of the work `id`, if it has one.
    public func release(for id: UInt64) {
        let held = claims.withLock { claims -> ObjectPath? in
            switch claims[id] {
            case .held(let path):
                claims.removeValue(forKey: id)
                return path
            case .pending:
                claims[id] = .released
                return nil
            case .released, nil:
                return nil
            }
        }
        if let held { Task { await session.deactivate(held) } }
    }
}
