import ArgumentParser
import EarshotContract
import EarshotDBus
import EarshotService
import EarshotSync
import Foundation
import Glibc
import Logging
import PieceStore
import PostgresPieceStore

@main
struct PiecesCommand: ServiceCommand {
    static let configuration = CommandConfiguration(
        commandName: "earshot-pieces",
        abstract: "The store of audio pieces with musical metadata (org.earshot.Pieces1).",
        discussion: """
            Keeps pieces after the Allihoopa model: metadata checked against Allihoopa's rules, \
            assets content-addressed (SHA-256), the mix stem decoded and measured at drop time (EBU \
            R128 loudness and true peak), and audio delivered as WAV, Ogg Vorbis, FLAC or AAC in M4A, \
            transcoded on first request and kept. A piece is visible only when complete; what an \
            interrupted run leaves is swept at start.

            The catalogue is private by default (SQLite and files under --data-dir); with \
            --database postgresql://… it is shared by every host that names the same database, \
            with their drops and deletions announced on each host's bus.
            """,
        subcommands: [Serve.self, Migrate.self, AddHost.self, RemoveHost.self, UpgradeCatalogue.self],
        defaultSubcommand: Serve.self)
}

/// Where the catalogue is: `--data-dir`, `--database`, `--database-password-file`.
struct CatalogueOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where the private store lives, and where a shared catalogue stages and caches files on this host, in shared-cache/ (default: $XDG_DATA_HOME/earshot/pieces).", valueName: "dir"))
    var dataDir: String?

    @Option(help: ArgumentHelp("The catalogue: absent or sqlite: for the private store under --data-dir, or postgresql://host-role@server:port/database[?sslmode=…&sslrootcert=FILE] for one shared with other hosts, as this host's own role (add-host makes it; it is this host's name there); TLS verify-full by default off the loopback; the password from $PGPASSWORD or --database-password-file, never in the URL.", valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("A file whose first line is the database password; refused when others may read it (chmod 600).", valueName: "file"))
    var databasePasswordFile: String?

    @Option(name: .customLong("cache-size"),
            help: ArgumentHelp("The most a shared catalogue keeps of its objects on this host, in bytes or with K, M or G (default 2G); the objects used longest ago go first.",
                               valueName: "size"))
    var cacheSize: String?

    @Option(name: .customLong("fleet-admin"),
            help: ArgumentHelp("A user of this host who may delete any piece of a shared catalogue, dropped on any host (repeatable; nobody by default).",
                               valueName: "user"))
    var fleetAdministrators: [String] = []

    @Option(help: ArgumentHelp("Accepted from earlier command lines only: a shared catalogue's host is the role in --database's URL, and this, when given, must be that role.",
                               valueName: "name"))
    var hostName: String?

    func validate() throws {
        if let dataDir, dataDir.isEmpty { throw ValidationError("--data-dir must not be empty") }
        if let hostName {
            guard let database, !Self.isLocal(database) else { throw ValidationError("--host-name needs a postgresql:// --database") }
            let role = URLComponents(string: database)?.user?.removingPercentEncoding
            guard role == hostName else {
                throw ValidationError("--host-name: '\(hostName)' is not the role of --database ('\(role ?? "")'): a host is the role it logs in as")
            }
        }
        if database.map(Self.isLocal) ?? true, databasePasswordFile != nil || !fleetAdministrators.isEmpty || cacheSize != nil {
            throw ValidationError("--database-password-file, --cache-size and --fleet-admin need a postgresql:// --database")
        }
        if let cacheSize, Self.bytes(cacheSize) == nil {
            throw ValidationError("--cache-size: '\(cacheSize)' is not a size (bytes, or a number with K, M or G)")
        }
        if let database, !Self.isLocal(database) { _ = try sharedConfiguration(database) }
    }

    /// `1024`, `512K`, `64M`, `2G` as bytes (powers of 1024); nil for anything else.
    static func bytes(_ text: String) -> UInt64? {
        let units: [Character: UInt64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        guard let last = text.uppercased().last else { return nil }
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (Substring(text), 1)
        guard let value = UInt64(digits), value > 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? nil : product
    }

    static func isLocal(_ database: String) -> Bool { database == "sqlite:" || database.hasPrefix("sqlite:") }

    var directory: URL {
        let environment = ProcessInfo.processInfo.environment
        return URL(fileURLWithPath: dataDir ?? ((environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/share") + "/earshot/pieces"))
    }

    /// The shared catalogue's settings from `url`, the password file or `$PGPASSWORD`.
    func sharedConfiguration(_ url: String) throws -> SharedCatalogueConfiguration {
        var configuration = try Self.sharedConfiguration(url, passwordFile: databasePasswordFile, option: "--database")
        configuration.fleetAdministrators = Set(fleetAdministrators)
        if let size = cacheSize.flatMap(Self.bytes) { configuration.cacheBytes = size }
        return configuration
    }

    /// A catalogue's settings from `url`, with the password from `passwordFile` (refused
    /// when others may read it) or `$PGPASSWORD`.
    static func sharedConfiguration(_ url: String, passwordFile: String?, option: String) throws -> SharedCatalogueConfiguration {
        var password = ProcessInfo.processInfo.environment["PGPASSWORD"]
        if let databasePasswordFile = passwordFile {
            // As ssh does with keys: a secret others may read is refused.
            var info = stat()
            guard stat(databasePasswordFile, &info) == 0 else {
                throw ValidationError("\(option)-password-file: cannot read \(databasePasswordFile): \(String(cString: strerror(errno)))")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw ValidationError("\(option)-password-file: \(databasePasswordFile) may be read by others (mode "
                                      + String(info.st_mode & 0o777, radix: 8) + "): chmod 600 it")
            }
            guard let text = try? String(contentsOfFile: databasePasswordFile, encoding: .utf8) else {
                throw ValidationError("\(option)-password-file: cannot read \(databasePasswordFile)")
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        do {
            return try SharedCatalogueConfiguration(url: url, password: password)
        } catch {
            throw ValidationError("\(option): \(error)")
        }
    }

    /// The catalogue these options name.
    func catalogue(logger: Logger) throws -> any PieceCatalogue {
        guard let database, !Self.isLocal(database) else { return try LocalPieceCatalogue(directory: directory) }
        return try SharedPieceCatalogue(configuration: try sharedConfiguration(database), directory: directory, logger: logger)
    }
}

extension PiecesCommand {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve org.earshot.Pieces1 on the bus (the default).")

        @OptionGroup var bus: BusOptions
        @OptionGroup var introspection: IntrospectOption<PiecesContract>
        @OptionGroup var catalogue: CatalogueOptions

        func run() async throws {
            // Past a file-size limit (RLIMIT_FSIZE) a write fails with EFBIG, refused like a full
            // disk, instead of SIGXFSZ ending the process.
            signal(SIGXFSZ, SIG_IGN)
            let catalogue = self.catalogue
            await ServiceMain.run(PiecesContract.service, options: bus) { connection, logger in
                let service = PiecesService(connection: connection, store: try catalogue.catalogue(logger: logger),
                                            logger: logger)
                try await service.start()
                return { await service.shutdown() }
            }
        }
    }

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a private store into a shared catalogue.",
            discussion: """
                Copies every piece of the store in --from-data-dir (metadata, lineage, assets and \
                transcodes) into the catalogue --database names, oldest first, each piece in one \
                transaction, every object's bytes checked against its SHA-256 on the way. Pieces \
                already there are left alone, so running it again copies nothing twice and goes on \
                where an interrupted run stopped. Authors become user@host with this host's name, \
                the role --database logs in as (the one it serves with). The private store is only read; what was copied is recorded beside it \
                (shared-catalogue-copies), so that a shared host can start on that directory.

                Exit status: 0 when every piece is in the catalogue, 3 when some could not be \
                copied (each is named, with why), 1 on any other failure.
                """)

        @Option(help: ArgumentHelp("The private store to copy from.", valueName: "dir"))
        var fromDataDir: String

        @OptionGroup var catalogue: CatalogueOptions

        func validate() throws {
            guard let database = catalogue.database, !CatalogueOptions.isLocal(database) else {
                throw ValidationError("--database must name a postgresql:// catalogue to copy into")
            }
            guard FileManager.default.fileExists(atPath: PieceStore.databasePath(in: URL(fileURLWithPath: fromDataDir))) else {
                throw ValidationError("--from-data-dir: \(fromDataDir) holds no private store (no pieces.sqlite)")
            }
        }

        func run() async throws {
            var logger = Logger(label: "earshot-pieces") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .warning
            let source = try PieceStore(directory: URL(fileURLWithPath: fromDataDir))
            let target = try SharedPieceCatalogue(configuration: try catalogue.sharedConfiguration(catalogue.database!),
                                                  directory: catalogue.directory, logger: logger)
            let report: SharedPieceCatalogue.MigrationReport
            do {
                report = try await target.migrate(from: source) { done, total in
                    FileHandle.standardError.write(Data("\r\(done)/\(total) pieces".utf8))
                }
            } catch {
                await target.close()
                throw error
            }
            await target.close()
            FileHandle.standardError.write(Data("\n".utf8))
            for failure in report.failed {
                FileHandle.standardError.write(Data("not copied: piece \(failure.id): \(failure.reason)\n".utf8))
            }
            print("copied \(report.copied) piece(s), \(report.present) already there, \(report.failed.count) not copied, "
                  + "from \(fromDataDir) to \(target.location)")
            // Some pieces are still only in the private store: a shared host refuses it until they are copied.
            if !report.failed.isEmpty { throw ExitCode(3) }
        }
    }
}

/// An administrator's connection to a shared catalogue: `--database`, and its password.
struct AdministratorOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The catalogue, as its administrator (its owner, or a superuser): postgresql://admin@server:port/database[?sslmode=…]; the password from $PGPASSWORD or --database-password-file.",
                               valueName: "url"))
    var database: String

    @Option(help: ArgumentHelp("A file whose first line is the administrator's password; refused when others may read it.", valueName: "file"))
    var databasePasswordFile: String?

    func validate() throws { _ = try configuration() }

    func configuration() throws -> SharedCatalogueConfiguration {
        try CatalogueOptions.sharedConfiguration(database, passwordFile: databasePasswordFile, option: "--database")
    }

    static func logger() -> Logger {
        var logger = Logger(label: "earshot-pieces") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return logger
    }
}

extension PiecesCommand {
    struct AddHost: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-host",
            abstract: "Make a host of a shared catalogue: a database role of its own, with a new password.",
            discussion: """
                From an administrator's connection (--database): brings the catalogue's schema up \
                to date, makes the role NAME (a member of earshot_host, whose rows the database \
                holds it to: it sees the listed pieces and its own, and writes and deletes its own \
                only), gives it the catalogue's session limits, and writes its new password to \
                --password-file (made with mode 0600; it must not exist). The host then serves with \
                --database postgresql://NAME@server/database --database-password-file FILE: its \
                role is its identity, and its authors are user@NAME. The password reaches the \
                server as a SCRAM verifier only. With --fleet-admin the role may delete any \
                piece (its users named by its own --fleet-admin may ask).
                """)

        @Argument(help: ArgumentHelp("The host's name: its role (lower-case letters, digits, _ and -).", valueName: "name"))
        var name: String

        @OptionGroup var administrator: AdministratorOptions

        @Option(help: ArgumentHelp("Where to write the host's new password (mode 0600; must not exist).", valueName: "file"))
        var passwordFile: String

        @Flag(help: "The host's role may delete any piece of the catalogue, whichever host it was dropped on.")
        var fleetAdmin = false

        func validate() throws {
            guard SharedCatalogueHosts.isValidName(name) else {
                throw ValidationError("'\(name)' is not a host name: lower-case letters, digits, _ and -, starting with a letter or _")
            }
            guard !FileManager.default.fileExists(atPath: passwordFile) else {
                throw ValidationError("--password-file: \(passwordFile) exists; a new host's password goes into a new file")
            }
        }

        func run() async throws {
            // The file first (nothing secret in it yet): a role without its password written
            // anywhere would be of no use.
            let fd = open(passwordFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw ValidationError("--password-file: cannot create \(passwordFile): \(String(cString: strerror(errno)))")
            }
            let host: SharedCatalogueHosts.NewHost
            do {
                host = try await SharedCatalogueHosts.add(name, fleetAdministrator: fleetAdmin, administrator: try administrator.configuration(),
                                                          logger: AdministratorOptions.logger())
            } catch {
                close(fd)
                unlink(passwordFile)
                throw error
            }
            let line = Array((host.password + "\n").utf8)
            let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == line.count, fsync(fd) == 0, close(fd) == 0 else {
                throw ValidationError("--password-file: cannot write \(passwordFile): \(String(cString: strerror(errno)))")
            }
            print("host \(name) added\(fleetAdmin ? " (a fleet administrator)" : ""); its password is in \(passwordFile)")
        }
    }

    struct RemoveHost: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-host",
            abstract: "Retire a host of a shared catalogue: its role may log in no more.",
            discussion: """
                From an administrator's connection (--database): the role NAME may no longer log \
                in and is no host any more, and its sessions are ended. Its pieces stay (listed \
                ones are seen by every host; unlisted ones by none), and so does the role, so that \
                no new host takes its name and its pieces over.
                """)

        @Argument(help: ArgumentHelp("The host's name.", valueName: "name"))
        var name: String

        @OptionGroup var administrator: AdministratorOptions

        func run() async throws {
            try await SharedCatalogueHosts.remove(name, administrator: try administrator.configuration(), logger: AdministratorOptions.logger())
            print("host \(name) retired")
        }
    }

    struct UpgradeCatalogue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade-catalogue",
            abstract: "Bring a shared catalogue's schema up to what this earshot-pieces needs.",
            discussion: """
                From an administrator's connection (--database): applies the schema's migrations \
                it lacks, once (hosts own nothing of the catalogue and do not migrate it; a host \
                that finds an older schema refuses to start and says so). add-host does it too.
                """)

        @OptionGroup var administrator: AdministratorOptions

        func run() async throws {
            let applied = try await SharedCatalogueHosts.upgrade(try administrator.configuration(), logger: AdministratorOptions.logger())
            print(applied.isEmpty ? "the catalogue's schema is up to date" : "applied schema version(s) \(applied.map(String.init).joined(separator: ", "))")
        }
    }
}
