import EarshotDBus
import Foundation

/// What one object says about itself through `org.freedesktop.DBus.Introspectable`: its
/// interfaces (methods with their input types, properties with type and access) and the
/// names of its child nodes. Parses the subset of the introspection format that services
/// produce; unknown elements (signals, annotations) are skipped.
public struct IntrospectedNode: Sendable {
    public struct Method: Sendable {
        public let name: String
        public let inputs: [DBusType]
    }

    public struct Property: Sendable {
        public let name: String
        public let type: DBusType
        public let writable: Bool
    }

    public struct Interface: Sendable {
        public let name: String
        public fileprivate(set) var methods: [Method] = []
        public fileprivate(set) var properties: [Property] = []
    }

    public private(set) var interfaces: [Interface] = []
    public private(set) var children: [String] = []

    public init(xml: String) throws {
        var depth = 0  // <node> nesting; 1 inside the described object
        var interface: Interface?
        var method: (name: String, inputs: [DBusType])?
        for tag in Self.tags(in: xml) {
            switch (tag.name, tag.kind) {
            case ("node", .open), ("node", .empty):
                if depth == 1, let name = tag.attributes["name"] { children.append(name) }
                if tag.kind == .open { depth += 1 }
            case ("node", .close):
                depth -= 1
            case ("interface", .open) where depth == 1:
                interface = Interface(name: tag.attributes["name"] ?? "")
            case ("interface", .close) where depth == 1:
                if let done = interface { interfaces.append(done) }
                interface = nil
            case ("method", .open), ("method", .empty):
                guard interface != nil, let name = tag.attributes["name"] else { break }
                method = (name, [])
                if tag.kind == .empty {
                    interface?.methods.append(Method(name: name, inputs: []))
                    method = nil
                }
            case ("method", .close):
                if let done = method { interface?.methods.append(Method(name: done.name, inputs: done.inputs)) }
                method = nil
            case ("arg", _):
                guard method != nil, tag.attributes["direction", default: "in"] == "in",
                      let signature = tag.attributes["type"] else { break }
                method?.inputs.append(try DBusType(signature: signature))
            case ("property", .open), ("property", .empty):
                guard interface != nil, let name = tag.attributes["name"], let signature = tag.attributes["type"] else { break }
                let access = tag.attributes["access"] ?? "read"
                interface?.properties.append(Property(name: name, type: try DBusType(signature: signature),
                                                      writable: access.contains("write")))
            default:
                break
            }
        }
    }

    private struct Tag {
        enum Kind { case open, close, empty }
        let name: String
        let kind: Kind
        let attributes: [String: String]
    }

    /// The document's element tags in order (no comments, declarations or text).
    private static func tags(in xml: String) -> [Tag] {
        var result: [Tag] = []
        var rest = Substring(xml)
        while let start = rest.firstIndex(of: "<") {
            rest = rest[rest.index(after: start)...]
            if rest.hasPrefix("!--") {
                guard let end = rest.range(of: "-->") else { break }
                rest = rest[end.upperBound...]
                continue
            }
            guard let end = rest.firstIndex(of: ">") else { break }
            var body = rest[..<end]
            rest = rest[rest.index(after: end)...]
            if body.hasPrefix("!") || body.hasPrefix("?") { continue }
            var kind = Tag.Kind.open
            if body.hasPrefix("/") {
                kind = .close
                body = body.dropFirst()
            } else if body.hasSuffix("/") {
                kind = .empty
                body = body.dropLast()
            }
            let name = body.prefix { !$0.isWhitespace }
            result.append(Tag(name: String(name), kind: kind, attributes: attributes(body.dropFirst(name.count))))
        }
        return result
    }

    /// `key="value"` pairs (single or double quotes), entities decoded.
    private static func attributes(_ text: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = text
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].trimmingCharacters(in: .whitespacesAndNewlines)
            rest = rest[rest.index(after: equals)...].drop { $0.isWhitespace }
            guard let quote = rest.first, quote == "\"" || quote == "'" else { break }
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: quote) else { break }
            result[key] = decodeEntities(rest[..<close])
            rest = rest[rest.index(after: close)...]
        }
        return result
    }

    private static func decodeEntities(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        return text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
