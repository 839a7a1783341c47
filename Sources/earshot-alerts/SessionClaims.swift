import EarshotDBus
import Logging

/// The alert voice's claims on the audio session: while an alert's audio plays, an
/// activation of `org.earshot.Session1` with `playback` + `duckOthers`, when that service
/// is on the bus. Without it the audio plays all the same.
final class SessionClaims: Sendable {
    static let busName = "org.earshot.Session1"
    static let managerPath: ObjectPath = "/org/earshot/Session1"
    static let activation = "org.earshot.Session1.Activation"

    private enum Claim {
        case pending
        case held(ObjectPath)
        case released
    }

    private let connection: DBusConnection
    private let logger: Logger
    private let claims = Locked<[UInt64: Claim]>([:])

    init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    func claim(for id: UInt64) {
        claims.withLock { $0[id] = .pending }
        Task {
            guard (try? await connection.nameOwner(Self.busName)) != nil else {
                claims.withLock { _ = $0.removeValue(forKey: id) }
                return
            }
            do {
                let reply = try await connection.call(destination: Self.busName, path: Self.managerPath, interface: Self.busName,
                                                      member: "Activate",
                                                      [.vardict(["Category": .string("playback"), "Options": .strings(["duckOthers"])])],
                                                      timeout: .seconds(2))
                guard let path = reply.first?.objectPathValue else { return }
                let releasedMeanwhile = claims.withLock { claims -> Bool in
                    if case .released = claims[id] {
                        claims.removeValue(forKey: id)
                        return true
                    }
                    claims[id] = .held(path)
                    return false
                }
                if releasedMeanwhile { await deactivate(path) }
            } catch {
                claims.withLock { _ = $0.removeValue(forKey: id) }
                logger.warning("alert \(id): the audio session refused playback: \(error); playing anyway")
            }
        }
    }

    func release(for id: UInt64) {
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
        if let held { Task { await deactivate(held) } }
    }

    private func deactivate(_ path: ObjectPath) async {
        _ = try? await connection.call(destination: Self.busName, path: path, interface: Self.activation,
                                       member: "Deactivate", [], timeout: .seconds(2))
    }
}
