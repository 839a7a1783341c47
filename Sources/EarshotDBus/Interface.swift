@_exported import DBusDeclarations

/// One named, typed argument of a method or signal.
public struct DBusArgument: Sendable, Equatable {
    public let name: String
    public let type: DBusType

    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }

    /// `DBusArgument("data", "ay")`. The signature is part of a static declaration, so an
    /// invalid one is a programming error.
    public init(_ name: String, _ signature: String) {
        do {
            self.init(name, try DBusType(signature: signature))
        } catch {
            preconditionFailure("argument \(name): \(error.message)")
        }
    }
}

/// A method: its arguments and the handler that serves it. The handler receives arguments
/// already checked against `inputs` and must return values matching `outputs`.
public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (MethodCall) async throws -> [DBusValue]

    public let name: String
    public let inputs: [DBusArgument]
    public let outputs: [DBusArgument]
    public let annotations: [DBusAnnotation]
    /// The error names the handler may reply with, besides `org.freedesktop.DBus.Error.Failed`
    /// (an internal failure); nil when the method declares none and any may be sent. The
    /// binding refuses to send another (`UndeclaredErrors`).
    public let errors: Set<String>?
    public let inputSignature: String
    public let outputSignature: String
    fileprivate(set) var handler: Handler

    public init(_ name: String, in inputs: [DBusArgument] = [], out outputs: [DBusArgument] = [],
                annotations: [DBusAnnotation] = [], errors: [String]? = nil, handler: @escaping Handler) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.annotations = annotations
        self.errors = errors.map(Set.init)
        self.handler = handler
        inputSignature = signatureString(inputs.map(\.type))
        outputSignature = signatureString(outputs.map(\.type))
    }
}

extension DBusMethod {
    /// The declared method, served by `handler`.
    public init(_ declaration: MethodDeclaration, handler: @escaping Handler) {
        self.init(declaration.name, in: declaration.inputs.map(DBusArgument.init), out: declaration.outputs.map(DBusArgument.init),
                  annotations: declaration.annotations, errors: declaration.possibleErrors, handler: handler)
    }

    var declaration: MethodDeclaration {
        MethodDeclaration(name, in: inputs.map(\.declaration), out: outputs.map(\.declaration), annotations: annotations)
    }
}

extension DBusArgument {
    init(_ declaration: ArgumentDeclaration) { self.init(declaration.name, declaration.signature) }

    var declaration: ArgumentDeclaration { ArgumentDeclaration(name, type.signature) }
}

/// A signal's name and arguments.
public struct DBusSignal: Sendable {
    public let name: String
    public let arguments: [DBusArgument]
    public let annotations: [DBusAnnotation]
    public let signature: String

    public init(_ name: String, _ arguments: [DBusArgument] = [], annotations: [DBusAnnotation] = []) {
        self.name = name
        self.arguments = arguments
        self.annotations = annotations
        signature = signatureString(arguments.map(\.type))
    }
}

extension DBusSignal {
    public init(_ declaration: SignalDeclaration) {
        self.init(declaration.name, declaration.arguments.map(DBusArgument.init), annotations: declaration.annotations)
    }

    var declaration: SignalDeclaration {
        SignalDeclaration(name, arguments.map(\.declaration), annotations: annotations)
    }
}

/// A property. Its value lives in the exported object (`ExportedObject.set`); a writable
/// property's `setter` checks a new value from a client and returns what to store (it may
/// clamp or normalise), or throws a named error.
public struct DBusProperty: Sendable {
    public typealias Access = PropertyDeclaration.Access
    public typealias EmitsChangedSignal = PropertyDeclaration.EmitsChangedSignal

    public typealias Setter = @Sendable (DBusValue, MethodCall) async throws -> DBusValue
    /// Reads a property's current value when it is asked for (`Get`, `GetAll`), for a value
    /// that changes too often to be stored at every change and is not announced.
    public typealias Reader = @Sendable () -> DBusValue

    public let name: String
    public let type: DBusType
    /// `type`'s signature, kept so that finding a property by its declaration costs no string building.
    public let signature: String
    public let access: Access
    public let emitsChangedSignal: EmitsChangedSignal
    public let annotations: [DBusAnnotation]
    fileprivate(set) var setter: Setter?
    /// Set for a property read live (see `Reader`); such a property has no stored value.
    fileprivate(set) var reader: Reader?
    /// The errors a `Set` of it may reply with (nil: not declared, not checked).
    public internal(set) var setErrors: Set<String>?

    /// A read-only property.
    public init(_ name: String, _ signature: String, emitsChangedSignal: EmitsChangedSignal = .true,
                annotations: [DBusAnnotation] = []) {
        self.init(name, signature, access: .read, emitsChangedSignal: emitsChangedSignal,
                  annotations: annotations, setter: nil)
    }

    /// A writable property; `setter` decides what is stored.
    public init(_ name: String, _ signature: String, access: Access, emitsChangedSignal: EmitsChangedSignal = .true,
                annotations: [DBusAnnotation] = [], setter: Setter?) {
        self.name = name
        do {
            self.type = try DBusType(signature: signature)
        } catch {
            preconditionFailure("property \(name): \(error.message)")
        }
        self.signature = type.signature
        precondition(!access.writable || setter != nil, "writable property \(name) needs a setter")
        self.access = access
        self.emitsChangedSignal = emitsChangedSignal
        self.annotations = annotations
        self.setter = setter
    }
}

extension DBusProperty {
    /// The declared property; a writable one needs `setter`.
    public init(_ declaration: PropertyDeclaration, setter: Setter? = nil) {
        self.init(declaration.name, declaration.signature, access: declaration.access,
                  emitsChangedSignal: declaration.emitsChangedSignal, annotations: declaration.annotations, setter: setter)
        setErrors = Set(declaration.possibleSetErrors)
    }

    var declaration: PropertyDeclaration {
        PropertyDeclaration(name, type.signature, access: access, emitsChangedSignal: emitsChangedSignal, annotations: annotations,
                            errors: setErrors.map { $0.subtracting(PropertySetErrors.standard).sorted() } ?? [])
    }
}

/// An interface declared once: introspection, dispatch, signature checks and property
/// handling all come from this value.
public struct DBusInterface: Sendable {
    public let name: String
    public private(set) var methods: [DBusMethod]
    public private(set) var properties: [DBusProperty]
    public let signals: [DBusSignal]
    public let annotations: [DBusAnnotation]

    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
                signals: [DBusSignal] = [], annotations: [DBusAnnotation] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
        self.annotations = annotations
    }

    /// `declaration` served by `methods`, one for each method it declares, with a setter
    /// for each writable property and, for read-only properties that are not announced, an
    /// optional reader that gives their value when asked (the object then stores none). A
    /// declared method left without a handler, a handler for a method it does not declare,
    /// or a reader for a property that is writable or announced is a programming error.
    public init(_ declaration: InterfaceDeclaration, methods: [DBusMethod], setters: [String: DBusProperty.Setter] = [:],
                readers: [String: DBusProperty.Reader] = [:]) {
        let bound = methods.map(\.name), declared = declaration.methods.map(\.name)
        precondition(Set(bound) == Set(declared) && bound.count == declared.count,
                     "\(declaration.name): handlers for \(bound), declared \(declared)")
        precondition(Set(setters.keys).isSubset(of: declaration.properties.filter(\.access.writable).map(\.name)),
                     "\(declaration.name): setters for properties it does not declare writable")
        let liveReadable = declaration.properties.filter { $0.access == .read && $0.emitsChangedSignal == .false }
        precondition(Set(readers.keys).isSubset(of: liveReadable.map(\.name)),
                     "\(declaration.name): readers for properties that are writable or announced")
        self.init(declaration.name,
                  methods: declaration.methods.map { method in methods.first { $0.name == method.name }! },
                  properties: declaration.properties.map { property in
                      var bound = DBusProperty(property, setter: setters[property.name])
                      bound.reader = readers[property.name]
                      return bound
                  },
                  signals: declaration.signals.map(DBusSignal.init), annotations: declaration.annotations)
    }

    /// This interface as a declaration (without documentation), for introspection.
    public var declaration: InterfaceDeclaration {
        InterfaceDeclaration(name, methods: methods.map(\.declaration), signals: signals.map(\.declaration),
                             properties: properties.map(\.declaration), annotations: annotations)
    }

    /// The same declaration with handlers and setters that refer to nothing, for an
    /// object that has left the bus: handlers often hold the object's owner, which holds
    /// the object, and this ends that cycle.
    func detached() -> DBusInterface {
        var copy = self
        let gone: @Sendable () -> DBusError = { .unknownObject("the object has left the bus") }
        copy.methods = methods.map { method in
            var inert = method
            inert.handler = { _ in throw gone() }
            return inert
        }
        copy.properties = properties.map { property in
            var inert = property
            if inert.setter != nil { inert.setter = { _, _ in throw gone() } }
            // The last value stays readable through references still held.
            if let reader = inert.reader {
                let last = reader()
                inert.reader = { last }
            }
            return inert
        }
        return copy
    }

    public func method(_ name: String) -> DBusMethod? { methods.first { $0.name == name } }
    public func property(_ name: String) -> DBusProperty? { properties.first { $0.name == name } }
    public func signal(_ name: String) -> DBusSignal? { signals.first { $0.name == name } }

    /// Checks names and uniqueness; run when an object is exported.
    func validate() throws(DBusError) {
        try DBusNames.validateInterface(name)
        guard !DBusInterface.standardNames.contains(name) else {
            throw .invalidArgs("\(name) is served by the binding itself")
        }
        var seen = Set<String>()
        for member in methods.map(\.name) + signals.map(\.name) + properties.map(\.name) {
            try DBusNames.validateMember(member)
            guard seen.insert(member).inserted else { throw .invalidArgs("\(name) declares \(member) twice") }
        }
    }

    static let peer = "org.freedesktop.DBus.Peer"
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let standardNames: Set<String> = [peer, introspectable, properties]
}

extension DBusType {
    /// The value a property holds before it is first set (nil for `h`, which has none).
    public var zeroValue: DBusValue? {
        switch self {
        case .byte: .byte(0)
        case .boolean: .boolean(false)
        case .int16: .int16(0)
        case .uint16: .uint16(0)
        case .int32: .int32(0)
        case .uint32: .uint32(0)
        case .int64: .int64(0)
        case .uint64: .uint64(0)
        case .double: .double(0)
        case .string: .string("")
        case .objectPath: .objectPath(.root)
        case .signature: .signature("")
        case .unixFD: nil
        case .variant: .variant(.string(""))
        case .array(.byte): .bytes([])
        case .array(let element): .array(element, [])
        case .dictionary(let key, let value): .dictionary(key: key, value: value, [])
        case .structure(let fields):
            fields.allSatisfy { $0.zeroValue != nil } ? .structure(fields.compactMap(\.zeroValue)) : nil
        }
    }
}
