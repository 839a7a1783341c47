import ArgumentParser
import EarshotClient
import EarshotContract
import EarshotDBus
import Foundation
import Glibc

/// `earshot pieces drop`: stores an audio file as a new piece, handing the file over as a
/// descriptor.
struct PiecesDropCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop",
        abstract: "Drop an audio file (WAV, Ogg Vorbis or FLAC) as a new piece (Pieces1.Drop).",
        discussion: """
            The file is opened here and passed to the service as a file descriptor (\(PiecesContract.Manager.PieceKeys.mixStem.fd.name)), \
            so the service needs no access to its path. Prints the new piece's id.

            \(ClientExit.discussion)
            """)

    @OptionGroup var options: ClientOptions

    @Argument(help: ArgumentHelp("The mix stem: a WAV, Ogg Vorbis or FLAC file.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The title (1..50 characters).", valueName: "text"))
    var title: String

    @Option(name: .customLong("description"), help: ArgumentHelp("A description (at most 140 characters).", valueName: "text"))
    var pieceDescription: String?

    @Option(help: ArgumentHelp("Tempo (1..999.999).", valueName: "BPM"))
    var tempo: Double?

    @Option(name: .customLong("time-signature"), help: ArgumentHelp("Time signature, e.g. 3/4.", valueName: "upper/lower"))
    var timeSignature: String?

    @Option(name: .customLong("based-on"), help: ArgumentHelp("A piece this one is based on (repeatable).", valueName: "id"))
    var basedOn: [String] = []

    @Option(help: ArgumentHelp("unknown, atonal or tonal.", valueName: "tonality"))
    var tonality: PieceTonality?

    @Option(help: ArgumentHelp("The scale of a tonal piece: pitch classes 0 (C) to 11 (B), comma-separated.",
                               valueName: "list"))
    var scale: String?

    @Option(help: ArgumentHelp("The root of a tonal piece: 0 (C) to 11 (B).", valueName: "pitch"))
    var root: UInt8?

    @Flag(help: "Keep the piece out of listings by default (Listed false).")
    var unlisted = false

    func validate() throws {
        if let timeSignature { _ = try Self.timeSignature(timeSignature) }
        if let scale { _ = try Self.scale(scale) }
    }

    static func timeSignature(_ text: String) throws -> (UInt8, UInt8) {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let upper = UInt8(parts[0]), let lower = UInt8(parts[1]) else {
            throw ValidationError("--time-signature wants upper/lower, e.g. 3/4, not '\(text)'")
        }
        return (upper, lower)
    }

    static func scale(_ text: String) throws -> [Bool] {
        var scale = [Bool](repeating: false, count: 12)
        for part in text.split(separator: ",") {
            guard let pitch = Int(part.trimmingCharacters(in: .whitespaces)), (0..<12).contains(pitch) else {
                throw ValidationError("--scale wants pitch classes 0..11 separated by commas, not '\(text)'")
            }
            scale[pitch] = true
        }
        return scale
    }

    func execute(_ client: BusClient) async throws(ClientFailure) -> Int32 {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix("cannot open \(file)") }
        var piece = PieceDrop(title: title, mixStem: .descriptor(UnixFD(taking: fd)))
        piece.description = pieceDescription
        piece.tempo = tempo
        piece.timeSignature = timeSignature.flatMap { try? Self.timeSignature($0) }
        piece.basedOn = basedOn
        piece.tonality = tonality
        piece.scale = scale.flatMap { try? Self.scale($0) }
        piece.root = root
        if unlisted { piece.listed = false }

        let id = try await client.with(.pieces) { [piece] in try await $0.pieces.drop(piece) }
        if options.json {
            printJSON(.object([("id", .string(id))]))
        } else {
            Terminal.line(id)
        }
        return ClientExit.success
    }
}
