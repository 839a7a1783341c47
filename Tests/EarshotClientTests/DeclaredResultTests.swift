import ContractCore
import EarshotClient
import EarshotContract
import EarshotDBus
import EarshotTestHarness
import Foundation
import Testing

/// The dictionaries the services return (results, signal arguments, properties) carry only
/// the keys their declarations name, each with its declared type: what the API pages list
/// is what a client gets.
@Suite struct DeclaredResultTests {
    /// Every key of `values` is one of `keys`, with that key's signature.
    static func expectDeclared(_ values: [String: DBusValue]?, _ keys: [OptionKey], _ label: String,
                               sourceLocation: SourceLocation = #_sourceLocation) {
        guard let values else {
            Issue.record("\(label): no dictionary", sourceLocation: sourceLocation)
            return
        }
        #expect(!values.isEmpty, "\(label): empty", sourceLocation: sourceLocation)
        let declared = Dictionary(keys.map { ($0.name, $0.signature) }, uniquingKeysWith: { first, _ in first })
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let signature = declared[key] else {
                Issue.record("\(label): \(key) is not declared", sourceLocation: sourceLocation)
                continue
            }
            #expect(value.type.signature == signature, "\(label): \(key) is \(value.type.signature), declared \(signature)",
                    sourceLocation: sourceLocation)
        }
    }

    static func property(_ connection: DBusConnection, _ busName: String, _ path: String, _ interface: InterfaceDeclaration,
                         _ property: PropertyDeclaration) async throws -> DBusValue? {
        let reply = try await connection.call(destination: busName, path: try ObjectPath(path), interface: "org.freedesktop.DBus.Properties",
                                              member: "Get", [.string(interface.name), .string(property.name)])
        return reply.first?.variantValue
    }

    @Test func theServicesReturnOnlyDeclaredKeys() async throws {
        try await ServiceStack.with(["earshot-capture", "earshot-alerts", "earshot-pieces", "earshot-session"]) { stack in
            let client = stack.client
            let earshot = Earshot(connection: client)

            // Pieces: Get, List and PieceDropped, for a piece with every metadata key it stores.
            typealias Pieces = PiecesContract.Manager
            let dropped = try await client.subscribe(MatchRule(interface: Pieces.interface.name, member: Pieces.pieceDropped.name))
            let wav = stack.file("declared.wav")
            let pcm = Array(stack.microphone.prefix(32000))
            try Data(PCMWave.header(sampleRate: 16000, channels: 1, bitsPerSample: 16, dataBytes: UInt64(pcm.count)) + pcm).write(to: wav)
            var drop = PieceDrop(title: "Declared", mixStemPath: wav.path)
            drop.tempo = 120
            drop.timeSignatureUpper = 3
            drop.timeSignatureLower = 4
            drop.loopStartMicroseconds = 0
            drop.loopEndMicroseconds = 500_000
            let id = try await earshot.pieces.drop(drop)
            let got = try await client.call(destination: PiecesContract.busName, path: try ObjectPath(PiecesContract.managerPath),
                                            interface: Pieces.interface.name, member: Pieces.get.name, [.string(id)])
            Self.expectDeclared(got.first?.stringKeyedValue, Pieces.storedPieceKeys, Pieces.get.name)
            let listed = try await client.call(destination: PiecesContract.busName, path: try ObjectPath(PiecesContract.managerPath),
                                               interface: Pieces.interface.name, member: Pieces.list.name, [.vardict([:])])
            Self.expectDeclared(listed.first?.arrayValue?.first?.stringKeyedValue, Pieces.summaryKeys, Pieces.list.name)
            for await signal in dropped {
                Self.expectDeclared(signal.body.dropFirst().first?.stringKeyedValue, Pieces.summaryKeys, Pieces.pieceDropped.name)
                break
            }

            // Session: GetState, ListInputs, Route, Streams (empty without a mixer, so only its type).
            typealias Session = SessionContract.Manager
            let session = (SessionContract.busName, SessionContract.managerPath)
            let state = try await client.call(destination: session.0, path: try ObjectPath(session.1), interface: Session.interface.name,
                                              member: Session.getState.name)
            Self.expectDeclared(state.first?.stringKeyedValue, Session.getState.outputs[0].keys, Session.getState.name)
            let inputs = try await client.call(destination: session.0, path: try ObjectPath(session.1), interface: Session.interface.name,
                                               member: Session.listInputs.name)
            for input in inputs.first?.arrayValue ?? [] {
                Self.expectDeclared(input.stringKeyedValue, Session.InputKeys.all, Session.listInputs.name)
            }
            let route = try await Self.property(client, session.0, session.1, Session.interface, Session.route)
            Self.expectDeclared(route?.stringKeyedValue, Session.RouteKeys.all, Session.route.name)
            let streams = try await Self.property(client, session.0, session.1, Session.interface, Session.streams)
            #expect(streams?.type.signature == Session.streams.signature)

            // Capture and alerts: Capabilities.
            let capture = try await Self.property(client, CaptureContract.busName, CaptureContract.managerPath,
                                                  CaptureContract.Manager.interface, CaptureContract.Manager.capabilities)
            for entry in capture?.arrayValue ?? [] {
                Self.expectDeclared(entry.stringKeyedValue, CaptureContract.Manager.CapabilityKeys.all, "capture Capabilities")
            }
            #expect(capture?.arrayValue?.isEmpty == false)
            let alerts = try await Self.property(client, AlertsContract.busName, AlertsContract.managerPath,
                                                 AlertsContract.Manager.interface, AlertsContract.Manager.capabilities)
            Self.expectDeclared(alerts?.stringKeyedValue, AlertsContract.Manager.CapabilityKeys.all, "alerts Capabilities")
        }
    }
}
