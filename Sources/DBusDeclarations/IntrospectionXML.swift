/// Introspection XML rendered from interface declarations: what `Introspect` serves, what
/// `dbus/NAME.xml` holds and what a service prints with `--introspect`.
public enum IntrospectionXML {
    public static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// A node's document: its interfaces, then its children by name.
    public static func document(interfaces: [InterfaceDeclaration], children: [String] = []) -> String {
        var out = doctype + "<node>\n"
        for interface in interfaces {
            out += element(for: interface, indent: "  ")
        }
        for child in children {
            out += "  <node name=\"\(escape(child))\"/>\n"
        }
        return out + "</node>\n"
    }

    /// The `<interface>` element of one interface.
    public static func element(for interface: InterfaceDeclaration, indent: String) -> String {
        let i1 = indent, i2 = indent + "  ", i3 = indent + "    "
        var out = "\(i1)<interface name=\"\(escape(interface.name))\">\n"
        out += annotations(interface.annotations, indent: i2)
        for method in interface.methods {
            let body = method.inputs.map { arg($0, direction: "in", indent: i3) }.joined()
                + method.outputs.map { arg($0, direction: "out", indent: i3) }.joined()
                + annotations(method.annotations, indent: i3)
            out += element("method", name: method.name, body: body, indent: i2)
        }
        for signal in interface.signals {
            let body = signal.arguments.map { arg($0, direction: nil, indent: i3) }.joined()
                + annotations(signal.annotations, indent: i3)
            out += element("signal", name: signal.name, body: body, indent: i2)
        }
        for property in interface.properties {
            var notes = property.annotations
            if property.emitsChangedSignal != .true {
                notes.insert(DBusAnnotation("org.freedesktop.DBus.Property.EmitsChangedSignal",
                                            property.emitsChangedSignal.rawValue), at: 0)
            }
            let open = "\(i2)<property name=\"\(escape(property.name))\" type=\"\(escape(property.signature))\" access=\"\(property.access.rawValue)\""
            out += notes.isEmpty ? open + "/>\n" : open + ">\n" + annotations(notes, indent: i3) + "\(i2)</property>\n"
        }
        return out + "\(i1)</interface>\n"
    }

    private static func element(_ tag: String, name: String, body: String, indent: String) -> String {
        body.isEmpty
            ? "\(indent)<\(tag) name=\"\(escape(name))\"/>\n"
            : "\(indent)<\(tag) name=\"\(escape(name))\">\n" + body + "\(indent)</\(tag)>\n"
    }

    private static func arg(_ argument: ArgumentDeclaration, direction: String?, indent: String) -> String {
        let dir = direction.map { " direction=\"\($0)\"" } ?? ""
        return "\(indent)<arg name=\"\(escape(argument.name))\" type=\"\(escape(argument.signature))\"\(dir)/>\n"
    }

    private static func annotations(_ list: [DBusAnnotation], indent: String) -> String {
        list.map { "\(indent)<annotation name=\"\(escape($0.name))\" value=\"\(escape($0.value))\"/>\n" }.joined()
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(c)
            }
        }
        return out
    }
}
