import ContractCore
import EarshotContract
import EarshotDBus
import Foundation
import Testing

@Suite struct RecordTests {
    private typealias Pieces = PiecesContract.Manager

    @Test func recordFollowsTheJobToAPiece() async throws {
        try await ClientFixture.with(ClientFixture.everything) { fixture in
            let status = try await fixture.earshot(["status"])
            #expect(status.status == 0, "\(status)")
            #expect(status.lines.count == 5 && status.lines.allSatisfy { $0.contains(" running ") }, "\(status)")

            let result = try await fixture.earshot(["record", "--title", "Morning idea", "--max-ms", "1000", "--tempo", "100"],
                                                   timeout: .seconds(40))
            #expect(result.status == 0, "\(result)")
            #expect(Array(result.lines.prefix(4)) == ["preparing…", "recording…", "storing…", "confirming…"], "\(result)")
            #expect(result.lines.dropFirst(4).first?.hasPrefix("SUCCESS") == true, "\(result)")
            let pieceLine = try #require(result.lines.first { $0.hasPrefix("piece: ") }, "\(result)")
            let pieceID = String(pieceLine.dropFirst("piece: ".count))
            #expect(UUID(uuidString: pieceID) != nil)
            #expect(result.lines.contains("frames: 16000"), "\(result)")

            let piece = try #require(try await fixture.client.call(destination: PiecesContract.busName, path: "/org/earshot/Pieces1",
                                                                   interface: Pieces.interface.name, member: Pieces.get.name,
                                                                   [.string(pieceID)]).first?.stringKeyedValue)
            #expect(piece[Pieces.PieceKeys.title.name]?.stringValue == "Morning idea")
            #expect(piece[Pieces.PieceKeys.tempo.name]?.doubleValue == 100)
            #expect(piece[Pieces.PieceKeys.lengthMicroseconds.name]?.uint64Value == 1_000_000)
        }
    }

    @Test func recordRefusalIsAnErrorReply() async throws {
        try await ClientFixture.with(["earshot-orchestrator"]) { fixture in
            let result = try await fixture.earshot(["record", "--title", ""])
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.hasPrefix("earshot: \(EarshotErrorName.titleTooShort.name): "), "\(result)")
        }
    }
}
