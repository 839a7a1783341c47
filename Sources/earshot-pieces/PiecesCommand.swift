import ArgumentParser
import EarshotDBus
import EarshotService
import Foundation
import Glibc

@main
struct PiecesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-pieces",
        abstract: "The store of audio pieces with musical metadata (org.earshot.Pieces1).",
        discussion: """
            Keeps pieces after the Allihoopa model: metadata checked against Allihoopa's rules in \
            SQLite (WAL), assets as content-addressed files (SHA-256), the mix stem decoded and \
            measured at drop time (EBU R128 loudness and true peak), and audio delivered as WAV, \
            Ogg Vorbis, FLAC or AAC in M4A, transcoded on first request and kept. A piece is \
            visible only when complete; what an interrupted run leaves is swept at start.
            """)

    @OptionGroup var bus: BusOptions

    @Option(help: ArgumentHelp("Where the store lives (default: $XDG_DATA_HOME/earshot/pieces).", valueName: "dir"))
    var dataDir: String?

    func validate() throws {
        if let dataDir, dataDir.isEmpty { throw ValidationError("--data-dir must not be empty") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = dataDir ?? ((environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/share") + "/earshot/pieces")
        let settings = PiecesService.Settings(dataDirectory: URL(fileURLWithPath: directory),
                                              systemBus: bus.isSystemBus)
        // Past a file-size limit (RLIMIT_FSIZE) a write fails with EFBIG, refused like a full
        // disk, instead of SIGXFSZ ending the process.
        signal(SIGXFSZ, SIG_IGN)
        await ServiceMain.run(executable: "earshot-pieces", busName: PiecesInterfaces.busName, options: bus) { connection, logger in
            let service = try PiecesService(connection: connection, settings: settings, logger: logger)
            try await service.start()
            return { await service.shutdown() }
        }
    }
}
