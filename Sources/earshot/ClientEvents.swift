import EarshotClient
import EarshotDBus
import Foundation
import Glibc

/// What a command waiting on the bus can be woken by.
enum ClientEvent: Sendable {
    /// A signal from one of the forwarded subscriptions.
    case signal(DBusMessage)
    /// Ctrl-C (SIGINT) or SIGTERM.
    case interrupted
    /// The named service left the bus.
    case serviceGone(String)
    /// A key pressed on the terminal (`earshot hmi`).
    case key(UInt8)
    /// The terminal's input ended.
    case inputClosed
    /// A periodic wake-up (`earshot hmi`).
    case tick
    /// An alert this command presented completed (or its wait failed).
    case alertCompleted(Result<AlertResult, EarshotError>)
    /// A chunk of the pass-thru this command started.
    case chunk(AudioChunk)
    /// That pass-thru finished (or its wait failed); every chunk came before.
    case passThruFinished(Result<PassThruResult, EarshotError>)
    /// The job this command started began a step.
    case jobState(JobState)
    /// That job finished (or its wait failed); every step came before.
    case jobFinished(Result<JobResult, EarshotError>)
    /// A signal of the session service.
    case session(SessionEvent)
}

/// One queue of events for a command that waits: the signals it subscribed to, Ctrl-C,
/// a service leaving the bus, and for the HMI keys and ticks, in the order they happen.
final class ClientEvents: Sendable {
    private let queue = EventQueue()
    private let tasks = Locked<[Task<Void, Never>]>([])
    private let signalSources = Locked<[SignalSource]>([])

    init() {}

    deinit { stop() }

    /// Forwards every signal of `subscription`.
    func forward(_ subscription: SignalSubscription) {
        let queue = self.queue
        track(Task {
            for await message in subscription { queue.push(.signal(message)) }
        })
    }

    /// Reports `alert`'s completion.
    func forward(_ alert: PresentedAlert) {
        let queue = self.queue
        track(Task {
            do {
                queue.push(.alertCompleted(.success(try await alert.result)))
            } catch {
                queue.push(.alertCompleted(.failure(Self.earshotError(error))))
            }
        })
    }

    /// Reports `passThru`'s chunks, then its end.
    func forward(_ passThru: PassThru) {
        let queue = self.queue
        track(Task {
            for await chunk in passThru { queue.push(.chunk(chunk)) }
            do {
                queue.push(.passThruFinished(.success(try await passThru.result)))
            } catch {
                queue.push(.passThruFinished(.failure(Self.earshotError(error))))
            }
        })
    }

    /// Forwards the session service's `events`.
    func forward(_ events: AsyncStream<SessionEvent>) {
        let queue = self.queue
        track(Task {
            for await event in events { queue.push(.session(event)) }
        })
    }

    /// Reports `job`'s steps, then its end.
    func forward(_ job: Job) {
        let queue = self.queue
        track(Task {
            for await state in job.states { queue.push(.jobState(state)) }
            do {
                queue.push(.jobFinished(.success(try await job.result)))
            } catch {
                queue.push(.jobFinished(.failure(Self.earshotError(error))))
            }
        })
    }

    static func earshotError(_ error: any Error) -> EarshotError {
        error as? EarshotError ?? EarshotError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
    }

    /// Reports `service` leaving the bus (at once if it is not on it now).
    func watch(_ service: BusService, on client: BusClient) async throws(ClientFailure) {
        let owners: AsyncStream<String?>
        do {
            owners = try await client.connection.watchNameOwner(service.name)
        } catch {
            throw ClientFailure.from(error)
        }
        let queue = self.queue
        track(Task {
            for await owner in owners where owner == nil {
                queue.push(.serviceGone(service.name))
            }
        })
    }

    /// Turns SIGINT and SIGTERM into `.interrupted` events instead of ending the process.
    func catchInterrupts() {
        let queue = self.queue
        let sources = [SIGINT, SIGTERM].map { number in
            SignalSource(number) { queue.push(.interrupted) }
        }
        signalSources.withLock { $0 += sources }
    }

    /// Reads stdin byte by byte on a thread of its own (a blocking read has no place on
    /// the cooperative pool), each byte a `.key`; its end is `.inputClosed`.
    func readKeys() {
        let queue = self.queue
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(0, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { break }
                queue.push(.key(byte))
            }
            queue.push(.inputClosed)
        }
        thread.name = "earshot-keys"
        thread.start()
    }

    /// A `.tick` every `interval`, until `stop()`.
    func tick(every interval: Duration) {
        let queue = self.queue
        track(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                queue.push(.tick)
            }
        })
    }

    /// The next event, or nil after `stop()`.
    func next() async -> ClientEvent? { await queue.next() }

    /// The next event, or nil if none comes within `timeout`.
    func next(timeout: Duration) async -> ClientEvent? {
        await withTaskGroup(of: ClientEvent?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Ends the forwarding and gives the signals their default handling back.
    func stop() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        for source in signalSources.withLock({ $0 }) { source.cancel() }
        signalSources.withLock { $0.removeAll() }
        queue.finish()
    }

    private func track(_ task: Task<Void, Never>) { tasks.withLock { $0.append(task) } }
}
