import EarshotContract
import Testing

/// Every service, interface, member and argument of the contract says what it is, and
/// every member is declared once.
@Suite struct DocumentationTests {
    static let services = EarshotContract.services

    /// "Interface.Member[.argument[.key]]" for each declaration whose doc is empty, and each
    /// key with rules but no error named for them.
    static func undocumented() -> [String] {
        var missing: [String] = []
        func check(_ doc: String, _ name: String) { if doc.trimmingCharacters(in: .whitespaces).isEmpty { missing.append(name) } }
        for service in services {
            check(service.doc, service.busName)
            for interface in service.interfaces {
                check(interface.doc, interface.name)
                for method in interface.methods {
                    check(method.doc, "\(interface.name).\(method.name)")
                    for argument in method.inputs + method.outputs {
                        let name = "\(interface.name).\(method.name).\(argument.name)"
                        check(argument.doc, name)
                        func keys(_ list: [OptionKey], in owner: String) {
                            for key in list {
                                check(key.doc, "\(owner).\(key.name)")
                                // A rule must say which error breaking it gets.
                                if !key.rules.isEmpty, key.errors.isEmpty { missing.append("\(owner).\(key.name) (its error)") }
                                keys(key.keys, in: "\(owner).\(key.name)")
                            }
                        }
                        keys(argument.keys, in: name)
                    }
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
