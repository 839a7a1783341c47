import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// Every key the contract declares for a request is one its service reads, with the type
/// declared: each is sent, in an otherwise valid request, with a value of a type no key
/// takes (an object path), and the service must refuse it as InvalidArgs naming that key.
/// A key the contract lacks is refused as unknown.
@Suite struct RequestKeyTests {
    /// A request valid up to its keys' types, for each method that takes one: its arguments
    /// with the a{sv} one's base entries.
    struct Probe {
        let method: MethodDeclaration
        let arguments: (_ request: [String: DBusValue]) -> [DBusValue]
        let base: [String: DBusValue]
    }

    static let speech = DBusValue.array(.structure([.string, .string]), [.structure([.string("TEXT"), .string("probe")])])

    private typealias CaptureKeys = CaptureContract.Manager.Keys
    private typealias AlertKeys = AlertsContract.Manager.Keys
    private typealias ButtonKeys = AlertsContract.Manager.SoftButtonKeys
    private typealias PieceKeys = PiecesContract.Manager.PieceKeys
    private typealias SessionKeys = SessionContract.Manager.Keys
    private typealias RecordKeys = OrchestratorContract.Manager.Keys

    static func probes(_ service: ServiceDeclaration) -> [Probe] {
        switch service.busName {
        case CaptureContract.busName:
            [Probe(method: CaptureContract.Manager.performAudioPassThru, arguments: { [.vardict($0)] },
                   base: [CaptureKeys.samplingRate.name: .uint32(16000), CaptureKeys.bitsPerSample.name: .uint32(16),
                          CaptureKeys.audioType.name: .string("PCM"), CaptureKeys.maxDuration.name: .uint32(1000)])]
        case AlertsContract.busName:
            [Probe(method: AlertsContract.Manager.presentAlert, arguments: { [.vardict($0)] },
                   base: [AlertKeys.text.name: .string("probe"),
                          AlertKeys.softButtons.name: .vardicts([[ButtonKeys.id.name: .uint16(1), ButtonKeys.text.name: .string("OK")]])]),
             Probe(method: AlertsContract.Manager.speak, arguments: { [speech, .vardict($0)] }, base: [:])]
        case PiecesContract.busName:
            [Probe(method: PiecesContract.Manager.drop, arguments: { [.vardict($0)] },
                   base: [PieceKeys.title.name: .string("probe"), PieceKeys.mixStem.path.name: .string("/nonexistent/probe.wav")]),
             Probe(method: PiecesContract.Manager.list, arguments: { [.vardict($0)] }, base: [:])]
        case SessionContract.busName:
            [Probe(method: SessionContract.Manager.setDesiredState, arguments: { [.vardict($0)] }, base: [SessionKeys.category.name: .string("playback")]),
             Probe(method: SessionContract.Manager.activate, arguments: { [.vardict($0)] },
                   base: [SessionKeys.category.name: .string("playback")])]
        case OrchestratorContract.busName:
            [Probe(method: OrchestratorContract.Manager.recordPiece, arguments: { [.vardict($0)] }, base: [RecordKeys.title.name: .string("probe")])]
        default:
            []
        }
    }

    static func arguments(_ service: ServiceDeclaration, directory: String) -> [String] {
        switch service.busName {
        case CaptureContract.busName: ["--device", "null"]
        case AlertsContract.busName: ["--output-device", "null"]
        case PiecesContract.busName: ["--data-dir", directory + "/pieces"]
        case SessionContract.busName: ["--state-file", directory + "/session.json", "--mixer", "none"]
        default: []
        }
    }

    @Test(arguments: EarshotContract.services.map(\.executable))
    func everyDeclaredKeyIsReadWithItsType(_ executable: String) async throws {
        let service = try #require(EarshotContract.services.first { $0.executable == executable })
        let probes = Self.probes(service)
        // Every method with an a{sv} request has a probe.
        let withKeys = service.interfaces.flatMap(\.methods).filter { $0.inputs.contains { !$0.keys.isEmpty } }
        #expect(Set(withKeys.map(\.name)) == Set(probes.map(\.method.name)))

        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let process = try await ServiceProcess(executable, arguments: Self.arguments(service, directory: bus.directory.path),
                                               bus: bus, busName: service.busName)
        defer { process.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        let path = try ObjectPath(service.managerPath)
        let wrong = DBusValue.objectPath("/probe")

        func refusal(_ probe: Probe, _ request: [String: DBusValue]) async -> DBusError? {
            do {
                let reply = try await client.call(destination: service.busName, path: path, interface: service.busName,
                                                  member: probe.method.name, probe.arguments(request))
                Issue.record("\(probe.method.name) accepted \(request): \(reply)")
                return nil
            } catch let error as DBusError {
                return error
            } catch {
                Issue.record("\(probe.method.name): \(error)")
                return nil
            }
        }

        for probe in probes {
            let keys = try #require(probe.method.inputs.first { !$0.keys.isEmpty }).keys
            for key in keys {
                var request = probe.base
                request[key.name] = wrong
                let error = await refusal(probe, request)
                #expect(error?.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(probe.method.name) \(key.name): \(String(describing: error))")
                #expect(error?.message.hasPrefix("\(key.name): got o") == true, "\(probe.method.name) \(key.name): \(String(describing: error))")
                // The keys of each dictionary in it, the same way.
                for inner in key.keys {
                    guard case .array(_, let entries)? = probe.base[key.name], case .dictionary(_, _, let first)? = entries.first else {
                        Issue.record("\(probe.method.name) \(key.name): no base dictionary to probe \(inner.name) in")
                        continue
                    }
                    var entry = Dictionary(uniqueKeysWithValues: first.compactMap { pair in
                        pair.key.stringValue.map { ($0, pair.value.variantValue ?? pair.value) }
                    })
                    entry[inner.name] = wrong
                    var nested = probe.base
                    nested[key.name] = .vardicts([entry])
                    let error = await refusal(probe, nested)
                    #expect(error?.message.hasPrefix("\(key.name)[0].\(inner.name): got o") == true,
                            "\(probe.method.name) \(key.name)[0].\(inner.name): \(String(describing: error))")
                }
            }
            var unknown = probe.base
            unknown["NotAKeyOfTheContract"] = .boolean(true)
            let error = await refusal(probe, unknown)
            #expect(error?.message.hasPrefix("NotAKeyOfTheContract: unknown key") == true, "\(probe.method.name): \(String(describing: error))")
        }
    }
}
