import EarshotDBus
import Testing

@Suite struct IntrospectionTests {
    @Test func interfaceXMLComesFromTheDeclaration() {
        let interface = DBusInterface("org.example.Thing1", methods: [
            DBusMethod("Do", in: [DBusArgument("request", "a{sv}")], out: [DBusArgument("job", "o")]) { _ in [] },
            DBusMethod("Stop") { _ in [] },
        ], properties: [
            DBusProperty("Phase", "s"),
            DBusProperty("Level", "d", access: .readwrite) { value, _ in value },
            DBusProperty("Label", "s", emitsChangedSignal: .const),
        ], signals: [
            DBusSignal("Ended", [DBusArgument("code", "s"), DBusArgument("info", "a{sv}")]),
        ])
        let expected = """
              <interface name="org.example.Thing1">
                <method name="Do">
                  <arg name="request" type="a{sv}" direction="in"/>
                  <arg name="job" type="o" direction="out"/>
                </method>
                <method name="Stop"/>
                <signal name="Ended">
                  <arg name="code" type="s"/>
                  <arg name="info" type="a{sv}"/>
                </signal>
                <property name="Phase" type="s" access="read"/>
                <property name="Level" type="d" access="readwrite"/>
                <property name="Label" type="s" access="read">
                  <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="const"/>
                </property>
              </interface>

            """
        #expect(IntrospectionXML.element(for: interface.declaration, indent: "  ") == expected)
    }

    @Test func documentsListStandardInterfacesAndChildren() {
        let xml = Introspection.document(interfaces: [], children: ["a", "b"])
        #expect(xml.hasPrefix("<!DOCTYPE node PUBLIC"))
        for name in ["org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties"] {
            #expect(xml.contains("<interface name=\"\(name)\">"))
        }
        #expect(xml.contains("  <node name=\"a\"/>\n  <node name=\"b\"/>\n</node>\n"))
    }
}
