/// A signal match rule: the string sent to the bus with `AddMatch`, and the same rule
/// applied locally to route each received signal to the subscriptions it matches.
public struct MatchRule: Sendable, Equatable, CustomStringConvertible {
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: ObjectPath?
    public var pathNamespace: ObjectPath?
    public var destination: String?
    /// `argN` string matches.
    public var arguments: [Int: String]

    public init(sender: String? = nil, interface: String? = nil, member: String? = nil,
                path: ObjectPath? = nil, pathNamespace: ObjectPath? = nil,
                destination: String? = nil, arguments: [Int: String] = [:]) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
    }

    /// The rule in the bus's syntax, values quoted (a quote inside is written `'\''`).
    public var description: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            parts.append("\(key)='" + value.replacing("'", with: "'\\''") + "'")
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination)
        for index in arguments.keys.sorted() { add("arg\(index)", arguments[index]) }
        return parts.joined(separator: ",")
    }

    /// Checks the parts of the rule the bus would refuse, before sending it.
    func validate() throws(DBusError) {
        if let sender { try DBusNames.validateBusName(sender) }
        if let interface { try DBusNames.validateInterface(interface) }
        if let member { try DBusNames.validateMember(member) }
        if let destination { try DBusNames.validateBusName(destination) }
        if path != nil && pathNamespace != nil { throw .invalidArgs("a match rule cannot have both path and path_namespace") }
        for (index, value) in arguments {
            guard (0...63).contains(index) else { throw .invalidArgs("arg\(index): argument index must be 0..63") }
            guard !value.utf8.contains(0) else { throw .invalidArgs("arg\(index): contains a NUL character") }
        }
    }

    /// Whether `message` (a signal) matches. `senderOwner` resolves a well-known sender
    /// name to its current unique owner.
    func matches(_ message: DBusMessage, senderOwner: (String) -> String?) -> Bool {
        guard message.kind == .signal else { return false }
        if let sender, message.sender != sender {
            guard !DBusNames.isUniqueName(sender), let owner = senderOwner(sender), owner == message.sender else { return false }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isWithin(pathNamespace) else { return false }
        }
        if let destination, message.destination != destination { return false }
        for (index, wanted) in arguments {
            guard index < message.body.count else { return false }
            switch message.body[index] {
            case .string(let s) where s == wanted: continue
            case .objectPath(let p) where p.rawValue == wanted: continue
            default: return false
            }
        }
        return true
    }
}
