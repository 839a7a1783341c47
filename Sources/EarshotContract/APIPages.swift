import ContractCore
/// The API reference in `docs/api/`, rendered from the contract: an index with the
/// conventions every service follows, and one page per interface in BlueZ's manner (each
/// method with its arguments, its request's keys and its errors; signals; properties).
public enum APIPages {
    /// Every page, by file name.
    public static func all() -> [(name: String, text: String)] {
        var pages = [(name: "README.md", text: index())]
        for service in EarshotContract.services {
            for interface in service.interfaces {
                pages.append((name: interface.name + ".md", text: page(interface, of: service)))
            }
        }
        return pages
    }

    static let generated = "<!-- Generated from Sources/EarshotContract by `swift run earshot-api-docs`; edit the contract, not this page. -->"

    static func index() -> String {
        var lines = [generated, "", "# Earshot D-Bus API", ""]
        lines.append("Each service is its own executable with its own bus name. Its manager object has the path and")
        lines.append("interface named like the bus name; requests are objects below it.")
        lines.append("")
        lines.append("| Service | Executable | Interfaces |")
        lines.append("|---|---|---|")
        for service in EarshotContract.services {
            let interfaces = service.interfaces.map { "[`\($0.name)`](\($0.name).md)" }.joined(separator: ", ")
            lines.append("| \(service.doc) | `\(service.executable)` | \(interfaces) |")
        }
        lines.append("")
        lines.append("## Conventions")
        lines.append("")
        lines += EarshotContract.conventions.map { "- " + $0 }
        lines.append("")
        lines.append("## Errors")
        lines.append("")
        lines.append("| Error | Meaning |")
        lines.append("|---|---|")
        for (name, meaning) in EarshotContract.errorMeanings {
            lines.append("| `\(name)` | \(meaning) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func page(_ interface: InterfaceDeclaration, of service: ServiceDeclaration) -> String {
        var lines = [generated, "", "# \(interface.name)", ""]
        lines.append(interface.doc)
        lines.append("")
        lines.append("- Service: `\(service.busName)` (`\(service.executable)`)")
        lines.append("- Interface: `\(interface.name)`")
        lines.append("- Object path: `\(service.path(of: interface))`")
        if let notes = service.notes[interface.name], !notes.isEmpty {
            lines.append("")
            lines += notes.flatMap { [$0, ""] }.dropLast()
        }
        if !interface.methods.isEmpty {
            lines += ["", "## Methods"]
            for method in interface.methods { lines += self.method(method) }
        }
        if !interface.signals.isEmpty {
            lines += ["", "## Signals"]
            for signal in interface.signals {
                lines += ["", "### \(signal.name)(\(parameters(signal.arguments)))", "", signal.doc]
                lines += argumentList(signal.arguments)
                for argument in signal.arguments where !argument.keys.isEmpty {
                    lines += ["", "Keys of `\(argument.name)`:", ""] + resultKeyTable(argument.keys)
                }
            }
        }
        if !interface.properties.isEmpty {
            lines += ["", "## Properties", "", "| Property | Type | Access | Changes announced | Meaning |", "|---|---|---|---|---|"]
            for property in interface.properties {
                lines.append("| `\(property.name)` | \(typeName(property.signature)) (`\(property.signature)`) | \(property.access.rawValue) | "
                             + "\(announced(property.emitsChangedSignal)) | \(escape(property.doc)) |")
            }
            let refusable = interface.properties.filter { $0.access.writable && !$0.errors.isEmpty }
            if !refusable.isEmpty {
                lines += ["", "Setting a property (`org.freedesktop.DBus.Properties.Set`) fails with `InvalidArgs` for a value of "
                          + "another type, `PropertyReadOnly` for one not writable, and, for a value the property does not take:", ""]
                lines += refusable.map { property in
                    "- `\(property.name)`: " + property.errors.map { "`\($0)`" }.joined(separator: ", ")
                }
            }
            for property in interface.properties where !property.keys.isEmpty {
                lines += ["", "Keys of `\(property.name)`\(property.signature.hasPrefix("aa") ? " (each entry)" : ""):", ""]
                    + resultKeyTable(property.keys)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func method(_ method: MethodDeclaration) -> [String] {
        let returns = method.outputs.isEmpty ? "void" : method.outputs.map { "\(typeName($0.signature)) \($0.name)" }.joined(separator: ", ")
        var lines = ["", "### \(returns) \(method.name)(\(parameters(method.inputs)))", "", method.doc]
        lines += argumentList(method.inputs + method.outputs)
        for argument in method.inputs where !argument.keys.isEmpty {
            lines += ["", "Keys of `\(argument.name)`:", ""] + keyTable(argument.keys)
            for key in argument.keys where !key.keys.isEmpty {
                lines += ["", "Keys of each `\(key.name)` entry:", ""] + keyTable(key.keys)
            }
        }
        for argument in method.outputs where !argument.keys.isEmpty {
            lines += ["", "Keys of `\(argument.name)`\(argument.signature.hasPrefix("aa") ? " (each entry)" : ""):", ""]
                + resultKeyTable(argument.keys)
        }
        if !method.possibleErrors.isEmpty {
            lines += ["", "Possible errors: " + method.possibleErrors.map { "`\($0)`" }.joined(separator: ", ")]
        }
        return lines
    }

    static func argumentList(_ arguments: [ArgumentDeclaration]) -> [String] {
        guard !arguments.isEmpty else { return [] }
        return [""] + arguments.map { "- `\($0.name)` (`\($0.signature)`): \($0.doc)" }
    }

    /// The keys a result, signal or property carries: name, type and meaning.
    static func resultKeyTable(_ keys: [OptionKey]) -> [String] {
        ["| Key | Type | Meaning |", "|---|---|---|"]
            + keys.map { "| `\($0.name)` | \(typeName($0.signature)) (`\($0.signature)`) | \(escape($0.doc)) |" }
    }

    static func keyTable(_ keys: [OptionKey]) -> [String] {
        var lines = ["| Key | Type | Required | Default | Rules | Error when broken | Meaning |", "|---|---|---|---|---|---|---|"]
        for key in keys {
            let rules = key.rules.map(describe).joined(separator: "; ")
            let errors = key.errors.map { name in
                "`\(name.hasPrefix(EarshotContract.errorPrefix) ? String(name.dropFirst(EarshotContract.errorPrefix.count)) : name)`"
            }.joined(separator: ", ")
            lines.append("| `\(key.name)` | `\(key.signature)` | \(key.required ? "yes" : "no") | \(key.defaultValue.map { "`\($0)`" } ?? "") | "
                         + "\(escape(rules)) | \(errors) | \(escape(key.doc)) |")
        }
        return lines
    }

    static func describe(_ rule: OptionKey.Rule) -> String {
        switch rule {
        case .range(let range, let unit):
            let bound = { (value: Double) in value == value.rounded() ? String(Int64(value)) : String(value) }
            return "\(bound(range.lowerBound))..\(bound(range.upperBound))" + (unit.isEmpty ? "" : " \(unit)")
        case .oneOf(let values, let aliases, let anyCase, let unit):
            let place = { (alias: String) in values.firstIndex(of: aliases[alias]!) ?? values.count }
            let also = aliases.keys.sorted { (place($0), $0) < (place($1), $1) }.map { "\($0) for \(aliases[$0]!)" }.joined(separator: ", ")
            return "one of " + values.joined(separator: ", ") + (unit.isEmpty ? "" : " \(unit)") + (anyCase ? ", in any case" : "") + (aliases.isEmpty ? "" : " (also \(also))")
        case .maxLength(let length):
            return "at most \(length) characters"
        case .described(let words):
            return words
        }
    }

    static func parameters(_ arguments: [ArgumentDeclaration]) -> String {
        arguments.map { "\(typeName($0.signature)) \($0.name)" }.joined(separator: ", ")
    }

    static func announced(_ emits: PropertyDeclaration.EmitsChangedSignal) -> String {
        switch emits {
        case .true: "with the value"
        case .invalidates: "invalidated"
        case .const: "never changes"
        case .false: "not announced"
        }
    }

    /// A signature in words, as BlueZ's pages write types.
    static func typeName(_ signature: String) -> String {
        var index = signature.startIndex
        return parseType(signature, &index)
    }

    private static func parseType(_ signature: String, _ index: inout String.Index) -> String {
        guard index < signature.endIndex else { return "" }
        let character = signature[index]
        signature.formIndex(after: &index)
        switch character {
        case "y": return "byte"
        case "b": return "boolean"
        case "n": return "int16"
        case "q": return "uint16"
        case "i": return "int32"
        case "u": return "uint32"
        case "x": return "int64"
        case "t": return "uint64"
        case "d": return "double"
        case "s": return "string"
        case "o": return "object"
        case "g": return "signature"
        case "h": return "fd"
        case "v": return "variant"
        case "a":
            if index < signature.endIndex, signature[index] == "{" {
                signature.formIndex(after: &index)
                let key = parseType(signature, &index), value = parseType(signature, &index)
                signature.formIndex(after: &index)  // "}"
                return key == "string" && value == "variant" ? "dict" : "dict{\(key): \(value)}"
            }
            return "array{\(parseType(signature, &index))}"
        case "(":
            var fields: [String] = []
            while index < signature.endIndex, signature[index] != ")" { fields.append(parseType(signature, &index)) }
            signature.formIndex(after: &index)  // ")"
            return "(" + fields.joined(separator: ", ") + ")"
        default:
            return String(character)
        }
    }

    /// Text for a table cell: no pipe breaks the row.
    static func escape(_ text: String) -> String { text.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
}
