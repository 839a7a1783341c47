import EarshotSync

/// Exporting objects and serving method calls addressed to them.
extension DBusConnection {
    /// Exports an object at `path` with `interfaces`; `properties` gives initial values by
    /// interface and property name (others start at their type's zero value).
    @discardableResult
    public func export(_ path: ObjectPath, interfaces: [DBusInterface],
                       properties: [String: [String: DBusValue]] = [:]) throws(DBusError) -> ExportedObject {
        let object = try ExportedObject(path: path, interfaces: interfaces, initial: properties, connection: self)
        try routing.withLock { state throws(DBusError) in
            guard !state.finished else { throw .disconnected("the connection is closed") }
            guard state.objects.objects[path] == nil else { throw .invalidArgs("an object is already exported at \(path)") }
            state.objects.objects[path] = object
        }
        return object
    }

    /// Removes the object at `path`; later calls to it get `UnknownObject`. Its handlers
    /// are dropped, so an owner that keeps the object (to read or set its properties) no
    /// longer keeps itself alive through them.
    @discardableResult
    public func unexport(_ path: ObjectPath) -> ExportedObject? {
        let object = routing.withLock { $0.objects.objects.removeValueShrinking(forKey: path) }
        object?.detach()
        return object
    }

    /// The object exported at `path`, if any.
    public func exportedObject(at path: ObjectPath) -> ExportedObject? {
        routing.withLock { $0.objects.objects[path] }
    }

    /// All exported paths, sorted.
    public var exportedPaths: [ObjectPath] {
        routing.withLock { $0.objects.objects.keys.sorted() }
    }

    // MARK: Dispatch (I/O thread)

    private enum Route {
        case reply([DBusValue])
        case fail(DBusError)
        case run(MethodCall, DBusMethod)
        case setProperty(MethodCall, interface: String, property: String, value: DBusValue)
    }

    func dispatchMethodCall(_ message: DBusMessage) {
        switch route(message) {
        case .reply(let values):
            reply(to: message, with: .success(values))
        case .fail(let error):
            reply(to: message, with: .failure(error))
        case .run(let call, let method):
            if let refused = inFlight.admit(message.member) { return reply(to: message, with: .failure(refused)) }
            Task {
                defer { inFlight.finished() }
                do {
                    let values = try await method.handler(call)
                    let got = signatureString(values.map(\.type))
                    if got == method.outputSignature {
                        reply(to: message, with: .success(values))
                        call.hooks.run()
                    } else {
                        logger.error("\(message.interface ?? "").\(message.member ?? "") returned '\(got)', declared '\(method.outputSignature)'")
                        reply(to: message, with: .failure(.failed("internal error: the reply did not match the declared signature")))
                    }
                } catch {
                    let error = UndeclaredErrors.checked(Self.errorReply(for: error), method: method, logger: logger)
                    reply(to: message, with: .failure(error))
                    call.hooks.run()
                }
            }
        case .setProperty(let call, let interface, let property, let value):
            if let refused = inFlight.admit(message.member) { return reply(to: message, with: .failure(refused)) }
            Task {
                defer { inFlight.finished() }
                do {
                    try await call.object.setProperty(interface: interface, property: property, value: value, call: call, logger: logger)
                    reply(to: message, with: .success([]))
                } catch {
                    reply(to: message, with: .failure(Self.errorReply(for: error)))
                }
            }
        }
    }

    static func errorReply(for error: any Error) -> DBusError {
        if let error = error as? DBusError { return error }
        if error is CancellationError { return .failed("the request was cancelled") }
        return .failed(String(describing: error))
    }

    private func route(_ message: DBusMessage) -> Route {
        guard let path = message.path, let member = message.member else {
            return .fail(.unknownMethod("method call without a path or member"))
        }
        let (object, children) = routing.withLock { state in
            (state.objects.objects[path], state.objects.children(of: path))
        }
        let signature = message.signature
        func expect(_ wanted: String) -> DBusError? {
            signature == wanted ? nil : .invalidArgs("\(message.interface ?? "").\(member) takes '\(wanted)', got '\(signature)'")
        }

        if message.interface == DBusInterface.introspectable || (message.interface == nil && member == "Introspect") {
            guard member == "Introspect" else { return .fail(.unknownMethod("\(DBusInterface.introspectable) has no method \(member)")) }
            if let error = expect("") { return .fail(error) }
            guard object != nil || !children.isEmpty || path == .root else {
                return .fail(.unknownObject("no object at \(path)"))
            }
            return .reply([.string(Introspection.document(interfaces: object?.interfaces ?? [], children: children))])
        }
        guard let object else { return .fail(.unknownObject("no object at \(path)")) }
        let call = MethodCall(message: message, connection: self, object: object)

        if message.interface == DBusInterface.properties {
            switch member {
            case "Get":
                if let error = expect("ss") { return .fail(error) }
                do {
                    let value = try object.getProperty(interface: try call.string(0), property: try call.string(1))
                    return .reply([.variant(value)])
                } catch {
                    return .fail(error)
                }
            case "GetAll":
                if let error = expect("s") { return .fail(error) }
                let name = (try? call.string(0)) ?? ""
                if DBusInterface.standardNames.contains(name) { return .reply([.vardict([:])]) }
                let interfaces = name.isEmpty ? object.interfaces : object.interfaces.filter { $0.name == name }
                guard !interfaces.isEmpty else { return .fail(.unknownInterface("\(path) has no interface \(name)")) }
                var all: [String: DBusValue] = [:]
                for interface in interfaces { all.merge(object.readableProperties(of: interface)) { a, _ in a } }
                return .reply([.vardict(all)])
            case "Set":
                if let error = expect("ssv") { return .fail(error) }
                guard case .variant(let value) = message.body[2] else { return .fail(.invalidArgs("Set: value must be a variant")) }
                return .setProperty(call, interface: (try? call.string(0)) ?? "", property: (try? call.string(1)) ?? "", value: value)
            default:
                return .fail(.unknownMethod("\(DBusInterface.properties) has no method \(member)"))
            }
        }

        let method: DBusMethod
        if let name = message.interface {
            guard let interface = object.interface(name) else {
                return .fail(.unknownInterface("\(path) has no interface \(name)"))
            }
            guard let found = interface.method(member) else {
                return .fail(.unknownMethod("\(name) has no method \(member)"))
            }
            method = found
        } else {
            guard let found = object.interfaces.lazy.compactMap({ $0.method(member) }).first else {
                return .fail(.unknownMethod("\(path) has no method \(member)"))
            }
            method = found
        }
        if let error = expect(method.inputSignature) { return .fail(error) }
        return .run(call, method)
    }

    /// Sends the reply to a method call unless the caller asked for none.
    func reply(to call: DBusMessage, with result: Result<[DBusValue], DBusError>) {
        guard !call.noReplyExpected, let sender = call.sender else { return }
        var outgoing: DBusMessage
        switch result {
        case .success(let values):
            outgoing = DBusMessage(kind: .methodReturn)
            outgoing.body = values
        case .failure(let error):
            outgoing = DBusMessage(kind: .error)
            outgoing.errorName = error.name
            outgoing.body = [.string(error.message)]
        }
        outgoing.replySerial = call.serial
        outgoing.destination = sender
        do {
            try send(outgoing)
        } catch {
            logger.warning("could not reply to \(call.member ?? "?") from \(sender): \(error)")
            if case .success = result {
                // A reply the binding cannot encode still owes the caller an answer.
                reply(to: call, with: .failure(.failed("internal error: the reply could not be encoded: \(error.message)")))
            }
        }
    }
}
