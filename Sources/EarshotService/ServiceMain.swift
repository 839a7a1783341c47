import EarshotContract
import EarshotDBus
import EarshotSync
import Glibc
import Logging
import ServiceLifecycle

/// The shared life of a service process: log set-up, connecting, exporting, owning the
/// well-known name ("ready"), serving until SIGTERM/SIGINT or until the bus goes away.
///
/// Exit status: 0 after a signal, 1 when start-up fails, 2 when the bus is lost.
public enum ServiceMain {
    public static let exitStartupFailed: Int32 = 1
    public static let exitBusLost: Int32 = 2

    /// The allocator settings a `ServiceCommand`'s main could not make (nil when the process
    /// did not start through one), for the log once logging is set up.
    static let allocatorSettingsUnset = Locked<[String]?>(nil)

    /// What a service does once connected: export its objects and start its work. It
    /// returns a hook run on graceful shutdown (before the connection closes).
    public typealias Setup = @Sendable (DBusConnection, Logger) async throws -> (@Sendable () async -> Void)

    /// Runs the declared service and exits the process.
    public static func run(_ service: ServiceDeclaration, options: BusOptions, setup: @escaping Setup) async -> Never {
        await run(executable: service.executable, busName: service.busName, options: options, setup: setup)
    }

    /// Runs the service and exits the process.
    public static func run(executable: String, busName: String, options: BusOptions, setup: @escaping Setup) async -> Never {
        let code = await serve(executable: executable, busName: busName, options: options, setup: setup)
        exit(code)
    }

    /// Runs the service and returns its exit status.
    public static func serve(executable: String, busName: String, options: BusOptions, setup: @escaping Setup) async -> Int32 {
        // Done already by a `ServiceCommand`'s main, before it started any thread.
        let unset = allocatorSettingsUnset.withLock { unset -> [String]? in
            defer { unset = [] }
            return unset
        } ?? AllocatorTunables.applyInProcess()
        bootstrapLogging(label: executable, level: options.logLevel)
        MemoryReturn.keepLargeBuffersOffTheHeap()
        // A client that closes its end of a pipe (an `OpenStream` reader, an fd it passed)
        // must give the writer EPIPE, not end the service.
        signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: executable)
        logger.logLevel = options.logLevel
        if let tunables = AllocatorTunables.tunables { logger.info("GLIBC_TUNABLES=\(tunables)") }
        if !unset.isEmpty {
            logger.notice("""
                started without \(unset.joined(separator: ", ")) in GLIBC_TUNABLES (the systemd units and \
                D-Bus activation files set it: GLIBC_TUNABLES=\(AllocatorTunables.environmentValue)); \
                memory freed after work may stay with the process
                """)
        }

        let connection: DBusConnection
        do {
            connection = try DBusConnection.open(options.bus, logger: logger)
        } catch {
            logger.error("cannot connect to the \(options.bus): \(error.message)")
            return exitStartupFailed
        }
        let shutdownHook: @Sendable () async -> Void
        do {
            shutdownHook = try await setup(connection, logger)
        } catch {
            logger.error("start-up failed: \(ServiceMain.describe(error))")
            connection.close()
            return exitStartupFailed
        }

        // The name is requested from inside the group, whose signal handlers are in place
        // by then: from "ready" on, SIGTERM always means a graceful shutdown.
        let service = BusConnectionService(connection: connection, busName: busName, busDescription: options.bus.description,
                                           logger: logger, shutdownHook: shutdownHook)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
            logger.info("stopped")
            return 0
        } catch let error as StartupFailed {
            logger.error("start-up failed: \(ServiceMain.describe(error.underlying))")
            connection.close()
            return exitStartupFailed
        } catch let error as BusLost {
            logger.error("exiting: lost the bus: \(error.reason.message)")
            return exitBusLost
        } catch {
            logger.error("exiting: \(ServiceMain.describe(error))")
            return exitBusLost
        }
    }

    static func describe(_ error: any Error) -> String {
        (error as? DBusError)?.description ?? String(describing: error)
    }

    private static let bootstrapped = Locked(false)

    /// Installs the stderr/journald log handler once per process.
    public static func bootstrapLogging(label: String, level: Logger.Level) {
        bootstrapped.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { name in JournalLogHandler(label: label == name ? label : "\(label)/\(name)", level: level) }
        }
    }
}

struct BusLost: Error {
    let reason: DBusError
}

struct StartupFailed: Error {
    let underlying: any Error
}

/// Holds the connection open until graceful shutdown (then runs the service's hook and
/// closes) or until the bus goes away (then fails, so the process exits non-zero).
struct BusConnectionService: Service {
    let connection: DBusConnection
    let busName: String
    let busDescription: String
    let logger: Logger
    let shutdownHook: @Sendable () async -> Void

    func run() async throws {
        do {
            try await connection.requestName(busName)
        } catch {
            throw StartupFailed(underlying: error)
        }
        logger.info("ready: \(busName) on the \(busDescription) as \(connection.uniqueName)",
                    metadata: ["bus_name": "\(busName)", "unique_name": "\(connection.uniqueName)"])

        enum Outcome { case shutdown, lost(DBusError?) }
        let outcome = await withTaskGroup(of: Outcome.self) { group in
            let trimming = Task { [inFlight = connection.inFlight] in await MemoryReturn.trimPeriodically(calls: inFlight) }
            defer { trimming.cancel() }
            group.addTask { .lost(await connection.disconnected()) }
            group.addTask {
                // Returns on graceful shutdown; throws when cancelled (the bus was lost).
                do { try await gracefulShutdown() } catch {}
                return .shutdown
            }
            let first = await group.next() ?? .shutdown
            if case .shutdown = first {
                logger.info("shutting down")
                // Calls from now on are refused ("the service is stopping"); those under way get
                // a few seconds to finish and answer; then the hook ends the service's work.
                let pending = connection.inFlight.count
                if pending > 0 { logger.info("letting \(pending) call(s) under way finish") }
                if await !connection.inFlight.drain(within: .seconds(5)) {
                    logger.warning("\(connection.inFlight.count) call(s) still under way at exit")
                }
                await shutdownHook()
                await connection.flush()  // what the hook sent, before close() drops it
                connection.close()  // lets the disconnected() child finish
            }
            group.cancelAll()
            return first
        }
        if case .lost(let reason?) = outcome { throw BusLost(reason: reason) }
    }
}
