import EarshotContract
import Testing

/// Every service, interface, member and argument of the contract says what it is, and
/// every member is declared once.
@Suite struct DocumentationTests {
    static let services = EarshotContract.services

    /// "Service.Interface.Member[.argument]" for each declaration whose doc is empty.
    static func undocumented() -> [String] {
        var missing: [String] = []
        func check(_ doc: String, _ name: String) { if doc.trimmingCharacters(in: .whitespaces).isEmpty { missing.append(name) } }
        for service in services {
            check(service.doc, service.busName)
            for interface in service.interfaces {
                check(interface.doc, interface.name)
                for method in interface.methods {
                    check(method.doc, "\(interface.name).\(method.name)")
                    for argument in method.inputs + method.outputs { check(argument.doc, "\(interface.name).\(method.name).\(argument.name)") }
                }
                for signal in interface.signals {
                    check(signal.doc, "\(interface.name).\(signal.name)")
                    for argument in signal.arguments { check(argument.doc, "\(interface.name).\(signal.name).\(argument.name)") }
                }
                for property in interface.properties { check(property.doc, "\(interface.name).\(property.name)") }
            }
        }
        return missing
    }

    @Test func everyDeclarationIsDocumented() {
        #expect(Self.undocumented() == [])
    }

    @Test func membersAreUniqueWithinEachInterface() {
        for interface in Self.services.flatMap(\.interfaces) {
            let names = interface.methods.map(\.name) + interface.signals.map(\.name) + interface.properties.map(\.name)
            #expect(Set(names).count == names.count, "\(interface.name) declares a member twice")
        }
    }

    @Test func namesFollowTheConventions() {
        for service in Self.services {
            // Bus name, manager path and manager interface share one versioned name.
            #expect(service.managerPath == "/" + service.busName.replacingOccurrences(of: ".", with: "/"))
            #expect(service.interfaces.first?.name == service.busName)
            for interface in service.interfaces {
                #expect(interface.name.hasPrefix(service.busName))
                for method in interface.methods {
                    #expect(method.errors.allSatisfy { $0.hasPrefix(EarshotContract.errorPrefix) || $0.hasPrefix("org.freedesktop.DBus.Error.") })
                }
            }
        }
    }
}
