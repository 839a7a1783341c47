/// Introspection XML, generated from interface declarations.
public enum Introspection {
    public static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// The standard interfaces every object serves, declared like any other.
    static let standardInterfaces: [DBusInterface] = {
        let none: DBusMethod.Handler = { _ in [] }
        return [
            DBusInterface(DBusInterface.peer, methods: [
                DBusMethod("Ping", handler: none),
                DBusMethod("GetMachineId", out: [DBusArgument("machine_uuid", "s")], handler: none),
            ]),
            DBusInterface(DBusInterface.introspectable, methods: [
                DBusMethod("Introspect", out: [DBusArgument("xml_data", "s")], handler: none),
            ]),
            DBusInterface(DBusInterface.properties, methods: [
                DBusMethod("Get", in: [DBusArgument("interface_name", "s"), DBusArgument("property_name", "s")],
                           out: [DBusArgument("value", "v")], handler: none),
                DBusMethod("GetAll", in: [DBusArgument("interface_name", "s")],
                           out: [DBusArgument("props", "a{sv}")], handler: none),
                DBusMethod("Set", in: [DBusArgument("interface_name", "s"), DBusArgument("property_name", "s"),
                                       DBusArgument("value", "v")], handler: none),
            ], signals: [
                DBusSignal("PropertiesChanged", [DBusArgument("interface_name", "s"),
                                                 DBusArgument("changed_properties", "a{sv}"),
                                                 DBusArgument("invalidated_properties", "as")]),
            ]),
        ]
    }()

    /// The document served by `Introspect` for a node.
    public static func document(interfaces: [DBusInterface], children: [String]) -> String {
        var out = doctype + "<node>\n"
        for interface in standardInterfaces + interfaces {
            out += xml(for: interface, indent: "  ")
        }
        for child in children {
            out += "  <node name=\"\(escape(child))\"/>\n"
        }
        return out + "</node>\n"
    }

    /// A standalone document declaring one interface, as kept in `dbus/NAME.xml`.
    public static func interfaceDocument(_ interface: DBusInterface) -> String {
        doctype + "<node>\n" + xml(for: interface, indent: "  ") + "</node>\n"
    }

    /// The `<interface>` element of one interface.
    public static func xml(for interface: DBusInterface, indent: String) -> String {
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
            let open = "\(i2)<property name=\"\(escape(property.name))\" type=\"\(property.type.signature)\" access=\"\(property.access.rawValue)\""
            out += notes.isEmpty ? open + "/>\n" : open + ">\n" + annotations(notes, indent: i3) + "\(i2)</property>\n"
        }
        return out + "\(i1)</interface>\n"
    }

    private static func element(_ tag: String, name: String, body: String, indent: String) -> String {
        body.isEmpty
            ? "\(indent)<\(tag) name=\"\(escape(name))\"/>\n"
            : "\(indent)<\(tag) name=\"\(escape(name))\">\n" + body + "\(indent)</\(tag)>\n"
    }

    private static func arg(_ argument: DBusArgument, direction: String?, indent: String) -> String {
        let dir = direction.map { " direction=\"\($0)\"" } ?? ""
        return "\(indent)<arg name=\"\(escape(argument.name))\" type=\"\(escape(argument.type.signature))\"\(dir)/>\n"
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
