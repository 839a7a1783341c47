import CGlibcExtras
import Glibc

/// Threads of the process's own, started with `pthread_create`: the D-Bus I/O loop, PCM
/// transfers, file watches, decoding beside analysis. Foundation's `Thread` would do the
/// same but costs a service Foundation's libraries (several MiB of resident memory).
public enum Threads {
    /// Starts `work` on a new detached thread named `name` (at most 15 bytes are kept, the
    /// kernel's limit). Returns the thread, or pthread_create's error number.
    @discardableResult
    public static func detached(name: String, _ work: @escaping @Sendable () -> Void) -> Result<pthread_t, ThreadStartError> {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        return create(name: name, attributes: &attributes, work)
    }

    static func create(name: String, attributes: UnsafePointer<pthread_attr_t>?,
                       _ work: @escaping @Sendable () -> Void) -> Result<pthread_t, ThreadStartError> {
        let context = Unmanaged.passRetained(ThreadWork(name: name, work))
        var thread = pthread_t()
        let result = pthread_create(&thread, attributes, { argument in
            let work = Unmanaged<ThreadWork>.fromOpaque(argument!).takeRetainedValue()
            work.name.withCString { _ = pthread_setname_np(pthread_self(), $0) }
            work.run()
            return nil
        }, context.toOpaque())
        guard result == 0 else {
            context.release()
            return .failure(ThreadStartError(code: result))
        }
        return .success(thread)
    }
}

/// `pthread_create` refused: its error number (EAGAIN when threads or memory ran out).
public struct ThreadStartError: Error, Sendable {
    public let code: Int32
}

/// A thread that must be joined: joined by `join()` or, at the latest, when dropped.
public struct JoinableThread: ~Copyable {
    private let thread: pthread_t

    /// Starts `work` on a new thread; nil if `pthread_create` fails.
    public init?(name: String, _ work: @escaping @Sendable () -> Void) {
        guard case .success(let thread) = Threads.create(name: name, attributes: nil, work) else { return nil }
        self.thread = thread
    }

    /// Waits for the thread's work to end.
    public consuming func join() {
        pthread_join(thread, nil)
        discard self
    }

    deinit {
        pthread_join(thread, nil)
    }
}

/// A thread's name and work, handed through `pthread_create`'s one pointer.
private final class ThreadWork {
    let name: String
    let run: @Sendable () -> Void

    init(name: String, _ run: @escaping @Sendable () -> Void) {
        // The kernel keeps 15 bytes of a thread's name and refuses longer ones.
        self.name = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        self.run = run
    }
}
