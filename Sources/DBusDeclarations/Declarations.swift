/// An interface described as data: its members, their signatures and a line of
/// documentation each. Nothing here talks to a bus; a binding attaches handlers to a
/// declaration, and introspection XML and reference pages are rendered from it.
public struct InterfaceDeclaration: Sendable, Equatable {
    public let name: String
    public let doc: String
    public let methods: [MethodDeclaration]
    public let signals: [SignalDeclaration]
    public let properties: [PropertyDeclaration]
    public let annotations: [DBusAnnotation]

    public init(_ name: String, doc: String = "", methods: [MethodDeclaration] = [], signals: [SignalDeclaration] = [],
                properties: [PropertyDeclaration] = [], annotations: [DBusAnnotation] = []) {
        self.name = name
        self.doc = doc
        self.methods = methods
        self.signals = signals
        self.properties = properties
        self.annotations = annotations
    }

    public func method(_ name: String) -> MethodDeclaration? { methods.first { $0.name == name } }
    public func signal(_ name: String) -> SignalDeclaration? { signals.first { $0.name == name } }
    public func property(_ name: String) -> PropertyDeclaration? { properties.first { $0.name == name } }
}

/// One named argument of a method or signal; `signature` is a single complete D-Bus type.
/// An `a{sv}` request argument lists the keys it takes; an `a{sv}` or `aa{sv}` result or
/// signal argument, the keys it carries.
public struct ArgumentDeclaration: Sendable, Equatable {
    public let name: String
    public let signature: String
    public let doc: String
    public let keys: [OptionKey]

    public init(_ name: String, _ signature: String, doc: String = "", keys: [OptionKey] = []) {
        self.name = name
        self.signature = signature
        self.doc = doc
        self.keys = keys
    }
}

/// A method: arguments in and out, the named errors it may reply with, and, when its
/// first argument is an `a{sv}` request, the keys that request takes.
public struct MethodDeclaration: Sendable, Equatable {
    public let name: String
    public let doc: String
    public let inputs: [ArgumentDeclaration]
    public let outputs: [ArgumentDeclaration]
    public let errors: [String]
    public let annotations: [DBusAnnotation]

    public init(_ name: String, doc: String = "", in inputs: [ArgumentDeclaration] = [], out outputs: [ArgumentDeclaration] = [],
                errors: [String] = [], annotations: [DBusAnnotation] = []) {
        self.name = name
        self.doc = doc
        self.inputs = inputs
        self.outputs = outputs
        self.errors = errors
        self.annotations = annotations
    }

    /// Every error the method may reply with: its own, then those its request keys name for
    /// a broken rule (at any depth), each once.
    public var possibleErrors: [String] {
        func keyErrors(_ keys: [OptionKey]) -> [String] { keys.flatMap { $0.errors + keyErrors($0.keys) } }
        var seen = Set<String>()
        return (errors + inputs.flatMap { keyErrors($0.keys) }).filter { seen.insert($0).inserted }
    }
}

/// A signal and its arguments.
public struct SignalDeclaration: Sendable, Equatable {
    public let name: String
    public let doc: String
    public let arguments: [ArgumentDeclaration]
    public let annotations: [DBusAnnotation]

    public init(_ name: String, doc: String = "", _ arguments: [ArgumentDeclaration] = [], annotations: [DBusAnnotation] = []) {
        self.name = name
        self.doc = doc
        self.arguments = arguments
        self.annotations = annotations
    }
}

/// A property: its type, who may write it and how its changes are announced.
public struct PropertyDeclaration: Sendable, Equatable {
    public enum Access: String, Sendable {
        case read, write, readwrite
        public var readable: Bool { self != .write }
        public var writable: Bool { self != .read }
    }

    /// `org.freedesktop.DBus.Property.EmitsChangedSignal`.
    public enum EmitsChangedSignal: String, Sendable {
        /// `PropertiesChanged` carries the new value (the default).
        case `true`
        /// `PropertiesChanged` names the property as invalidated, without its value.
        case invalidates
        /// The value never changes while the object exists.
        case const
        /// No signal is emitted.
        case `false`
    }

    public let name: String
    public let signature: String
    public let doc: String
    public let access: Access
    public let emitsChangedSignal: EmitsChangedSignal
    public let annotations: [DBusAnnotation]
    /// The keys of an `a{sv}` or `aa{sv}` value.
    public let keys: [OptionKey]
    /// For a writable property: the named errors setting it may reply with, besides the
    /// binding's own for a call it cannot take (`PropertySetErrors.standard`).
    public let errors: [String]

    public init(_ name: String, _ signature: String, doc: String = "", access: Access = .read,
                emitsChangedSignal: EmitsChangedSignal = .true, annotations: [DBusAnnotation] = [], keys: [OptionKey] = [],
                errors: [String] = []) {
        self.name = name
        self.signature = signature
        self.doc = doc
        self.access = access
        self.emitsChangedSignal = emitsChangedSignal
        self.annotations = annotations
        self.keys = keys
        self.errors = errors
    }

    /// The errors a `Set` of this property may reply with: the binding's own, then its own.
    public var possibleSetErrors: [String] { PropertySetErrors.standard + errors.filter { !PropertySetErrors.standard.contains($0) } }
}

/// What `org.freedesktop.DBus.Properties.Set` replies with for a call it cannot take: an
/// unknown interface or property, a read-only property, a value of the wrong type, and
/// `Failed` for a failure of the service itself.
public enum PropertySetErrors {
    public static let standard = ["UnknownInterface", "UnknownProperty", "PropertyReadOnly", "InvalidArgs", "Failed"]
        .map { "org.freedesktop.DBus.Error." + $0 }
}

/// An introspection annotation.
public struct DBusAnnotation: Sendable, Equatable {
    public let name: String
    public let value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    public static let deprecated = DBusAnnotation("org.freedesktop.DBus.Deprecated", "true")
    public static let noReply = DBusAnnotation("org.freedesktop.DBus.Method.NoReply", "true")
}
