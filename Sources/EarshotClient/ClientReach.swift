import EarshotContract
import Synchronization

/// Which of the contract's methods and signals this client has reached in this process,
/// noted while `recording` is on: a method when it is called, a signal when a stream or a
/// subscription that decodes it is made. The completeness test turns it on, uses every
/// public call of the client once, and compares what was noted with the contract.
enum ClientReach {
    static let recording = Atomic<Bool>(false)
    private static let noted = Mutex<Set<String>>([])

    static func note(_ interface: InterfaceDeclaration, _ members: String...) {
        guard recording.load(ordering: .relaxed) else { return }
        noted.withLock { noted in
            for member in members { noted.insert(interface.name + "." + member) }
        }
    }

    static var reached: Set<String> { noted.withLock { $0 } }
}
