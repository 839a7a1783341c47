/// Introspection XML, generated from interface declarations.
public enum Introspection {
    public static let doctype = IntrospectionXML.doctype

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
        IntrospectionXML.document(interfaces: (standardInterfaces + interfaces).map(\.declaration), children: children)
    }

    /// A standalone document declaring one interface, as kept in `dbus/NAME.xml`.
    public static func interfaceDocument(_ interface: DBusInterface) -> String {
        IntrospectionXML.document(interfaces: [interface.declaration])
    }
}
