import CDBus

/// Reads and writes `DBusValue`s through libdbus message iterators.
///
/// Writing validates every value first (libdbus aborts the process on malformed input such
/// as a string holding NUL or an element of the wrong type), so libdbus only ever sees
/// values it accepts; the only remaining failure is running out of memory.
enum MessageCodec {
    // MARK: Validation

    /// Checks that `values` can be appended as a message body.
    static func validateBody(_ values: [DBusValue]) throws(DBusError) {
        let length = values.reduce(0) { $0 + $1.signatureLength }
        guard length <= 255 else {
            throw .invalidArgs("message body signature is \(length) bytes long, the limit is 255")
        }
        try validateValues(values)
    }

    /// Checks every value of a body whose signature is known to be valid.
    static func validateValues(_ values: [DBusValue]) throws(DBusError) {
        for (index, value) in values.enumerated() {
            try validate(value, depth: 0, at: "argument \(index)")
        }
    }

    private static func validate(_ value: DBusValue, depth: Int, at place: @autoclosure () -> String) throws(DBusError) {
        guard depth <= 64 else {
            throw .invalidArgs("\(place()): values nested deeper than 64 containers")
        }
        switch value {
        case .string(let s):
            guard !s.utf8.contains(0) else { throw .invalidArgs("\(place()): string contains a NUL character") }
        case .signature(let s):
            _ = try DBusType.parseList(s)
        case .unixFD(let fd):
            guard fd.rawValue != nil else { throw .invalidArgs("\(place()): file descriptor is already closed") }
        case .array(let elementType, let elements):
            try checkSignature(.array(elementType), at: place())
            for (i, element) in elements.enumerated() {
                guard element.type == elementType else {
                    throw .invalidArgs("\(place())[\(i)]: element of type \(element.type) in an array of \(elementType)")
                }
                try validate(element, depth: depth + 1, at: "\(place())[\(i)]")
            }
        case .dictionary(let keyType, let valueType, let entries):
            try checkSignature(.dictionary(key: keyType, value: valueType), at: place())
            for (i, entry) in entries.enumerated() {
                guard entry.key.type == keyType, entry.value.type == valueType else {
                    throw .invalidArgs("\(place())[\(i)]: entry of type {\(entry.key.type)\(entry.value.type)} in a dictionary of {\(keyType)\(valueType)}")
                }
                try validate(entry.key, depth: depth + 2, at: "\(place())[\(i)].key")
                try validate(entry.value, depth: depth + 2, at: "\(place())[\(i)].value")
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("\(place()): empty struct") }
            for (i, field) in fields.enumerated() {
                try validate(field, depth: depth + 1, at: "\(place()).\(i)")
            }
        case .variant(let inner):
            try checkSignature(inner.type, at: place())
            try validate(inner, depth: depth + 1, at: "\(place())<>")
        default:
            break
        }
    }

    private static func checkSignature(_ type: DBusType, at place: String) throws(DBusError) {
        do {
            _ = try DBusType(signature: type.signature)
        } catch {
            throw .invalidArgs("\(place): \(error.message)")
        }
    }

    // MARK: Writing

    /// Appends validated values to a message. Call `validateBody` first.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values {
            try append(value, to: &iter)
        }
    }

    private static func check(_ ok: dbus_bool_t) throws(DBusError) {
        if ok == 0 { throw .noMemory("out of memory while building a message") }
    }

    private static func appendBasic<T>(_ type: Int32, _ value: T, to iter: inout DBusMessageIter) throws(DBusError) {
        var copy = value
        let ok = withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, type, $0) }
        try check(ok)
    }

    private static func appendString(_ type: Int32, _ string: String, to iter: inout DBusMessageIter) throws(DBusError) {
        let ok = string.withCString { cString -> dbus_bool_t in
            var pointer: UnsafePointer<CChar>? = cString
            return dbus_message_iter_append_basic(&iter, type, &pointer)
        }
        try check(ok)
    }

    private static func withContainer(
        _ type: Int32, _ signature: String?, in iter: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) throws(DBusError) -> Void
    ) throws(DBusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        try check(opened)
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        try check(dbus_message_iter_close_container(&iter, &sub))
    }

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DBusError) {
        switch value {
        case .byte(let v): try appendBasic(EARSHOT_DBUS_TYPE_BYTE, v, to: &iter)
        case .boolean(let v): try appendBasic(EARSHOT_DBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0), to: &iter)
        case .int16(let v): try appendBasic(EARSHOT_DBUS_TYPE_INT16, v, to: &iter)
        case .uint16(let v): try appendBasic(EARSHOT_DBUS_TYPE_UINT16, v, to: &iter)
        case .int32(let v): try appendBasic(EARSHOT_DBUS_TYPE_INT32, v, to: &iter)
        case .uint32(let v): try appendBasic(EARSHOT_DBUS_TYPE_UINT32, v, to: &iter)
        case .int64(let v): try appendBasic(EARSHOT_DBUS_TYPE_INT64, v, to: &iter)
        case .uint64(let v): try appendBasic(EARSHOT_DBUS_TYPE_UINT64, v, to: &iter)
        case .double(let v): try appendBasic(EARSHOT_DBUS_TYPE_DOUBLE, v, to: &iter)
        case .string(let v): try appendString(EARSHOT_DBUS_TYPE_STRING, v, to: &iter)
        case .objectPath(let v): try appendString(EARSHOT_DBUS_TYPE_OBJECT_PATH, v.rawValue, to: &iter)
        case .signature(let v): try appendString(EARSHOT_DBUS_TYPE_SIGNATURE, v, to: &iter)
        case .unixFD(let fd):
            guard let raw = fd.rawValue else { throw .invalidArgs("file descriptor is already closed") }
            // libdbus duplicates the descriptor; ours stays open and owned by `fd`.
            try appendBasic(EARSHOT_DBUS_TYPE_UNIX_FD, Int32(raw), to: &iter)
        case .bytes(let bytes):
            try withContainer(EARSHOT_DBUS_TYPE_ARRAY, "y", in: &iter) { (sub: inout DBusMessageIter) throws(DBusError) in
                let ok = bytes.withUnsafeBytes { raw -> dbus_bool_t in
                    var base: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    if base == nil {
                        // An empty array still needs a valid pointer to a pointer.
                        return withUnsafePointer(to: UInt8(0)) { zero in
                            var p: UnsafePointer<UInt8>? = zero
                            return dbus_message_iter_append_fixed_array(&sub, EARSHOT_DBUS_TYPE_BYTE, &p, 0)
                        }
                    }
                    return dbus_message_iter_append_fixed_array(&sub, EARSHOT_DBUS_TYPE_BYTE, &base, Int32(raw.count))
                }
                try check(ok)
            }
        case .array(let elementType, let elements):
            try withContainer(EARSHOT_DBUS_TYPE_ARRAY, elementType.signature, in: &iter) { (sub: inout DBusMessageIter) throws(DBusError) in
                for element in elements { try append(element, to: &sub) }
            }
        case .dictionary(let keyType, let valueType, let entries):
            let entrySignature = "{" + keyType.signature + valueType.signature + "}"
            try withContainer(EARSHOT_DBUS_TYPE_ARRAY, entrySignature, in: &iter) { (sub: inout DBusMessageIter) throws(DBusError) in
                for entry in entries {
                    try withContainer(EARSHOT_DBUS_TYPE_DICT_ENTRY, nil, in: &sub) { (pair: inout DBusMessageIter) throws(DBusError) in
                        try append(entry.key, to: &pair)
                        try append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            try withContainer(EARSHOT_DBUS_TYPE_STRUCT, nil, in: &iter) { (sub: inout DBusMessageIter) throws(DBusError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .variant(let inner):
            try withContainer(EARSHOT_DBUS_TYPE_VARIANT, inner.type.signature, in: &iter) { (sub: inout DBusMessageIter) throws(DBusError) in
                try append(inner, to: &sub)
            }
        }
    }

    // MARK: Reading

    /// Reads a whole message body. libdbus has already validated the message on receipt,
    /// so a failure here means a type this binding does not know.
    static func readBody(of message: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            values.append(try read(&iter, in: message))
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var value = zero
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, $0) }
        return value
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &pointer)
        guard let pointer else { return "" }
        return String(cString: pointer)
    }

    private static func containerType(_ iter: inout DBusMessageIter) throws(DBusError) -> DBusType {
        guard let raw = dbus_message_iter_get_signature(&iter) else {
            throw .noMemory("out of memory while reading a signature")
        }
        defer { dbus_free(raw) }
        return try DBusType(signature: String(cString: raw))
    }

    private static func read(_ iter: inout DBusMessageIter, in message: OpaquePointer) throws(DBusError) -> DBusValue {
        let code = dbus_message_iter_get_arg_type(&iter)
        switch code {
        case EARSHOT_DBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case EARSHOT_DBUS_TYPE_BOOLEAN: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case EARSHOT_DBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case EARSHOT_DBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case EARSHOT_DBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case EARSHOT_DBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case EARSHOT_DBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case EARSHOT_DBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case EARSHOT_DBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case EARSHOT_DBUS_TYPE_STRING: return .string(string(&iter))
        case EARSHOT_DBUS_TYPE_OBJECT_PATH: return .objectPath(try ObjectPath(string(&iter)))
        case EARSHOT_DBUS_TYPE_SIGNATURE: return .signature(string(&iter))
        case EARSHOT_DBUS_TYPE_UNIX_FD:
            // libdbus hands out a fresh duplicate that the caller owns.
            let fd = basic(&iter, Int32(-1))
            guard fd >= 0 else { throw .failed("received an invalid file descriptor") }
            return .unixFD(UnixFD(taking: fd))
        case EARSHOT_DBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try read(&sub, in: message))
        case EARSHOT_DBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != EARSHOT_DBUS_TYPE_INVALID {
                fields.append(try read(&sub, in: message))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case EARSHOT_DBUS_TYPE_ARRAY:
            return try readArray(&iter, in: message)
        default:
            throw .failed("cannot decode D-Bus type code \(code)")
        }
    }

    private static func readArray(_ iter: inout DBusMessageIter, in message: OpaquePointer) throws(DBusError) -> DBusValue {
        let elementCode = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementCode == EARSHOT_DBUS_TYPE_BYTE {
            return .bytes(DBusBytes(readingFrom: &sub, in: message))
        }
        let arrayType = try containerType(&iter)
        switch arrayType {
        case .dictionary(let keyType, let valueType):
            var entries: [DBusValue.DictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == EARSHOT_DBUS_TYPE_DICT_ENTRY {
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &pair)
                let key = try read(&pair, in: message)
                dbus_message_iter_next(&pair)
                let value = try read(&pair, in: message)
                entries.append(.init(key, value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: keyType, value: valueType, entries)
        case .array(let elementType):
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != EARSHOT_DBUS_TYPE_INVALID {
                elements.append(try read(&sub, in: message))
                dbus_message_iter_next(&sub)
            }
            return .array(elementType, elements)
        default:
            throw .failed("array with unexpected signature \(arrayType)")
        }
    }
}
