import Dispatch

/// A connection is also a task executor that runs jobs on its I/O thread.
///
/// An awaited reply normally resumes its task on the cooperative pool: the I/O thread
/// reads the reply and wakes a pool thread, two thread wake-ups per call where a blocking
/// C client has one. Code that makes calls one after another can instead run on the I/O
/// thread itself, so that it goes on right where the reply was read:
///
///     try await withTaskExecutorPreference(connection) {
///         for request in requests { _ = try await connection.call(request) }
///     }
///
/// While such code runs, the connection reads and dispatches nothing: keep it short, and
/// never block in it (no disk, no waiting on locks others hold for long). Once the
/// connection has closed, its jobs run on Dispatch's global queue instead.
extension DBusConnection: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = jobs.withLock { state -> Bool in
            guard state.accepting else { return false }
            state.queue.append(job)
            return true
        }
        if queued {
            wake()
        } else {
            runElsewhere([job])
        }
    }

    /// Runs the jobs queued so far (I/O thread). Returns whether there were any.
    func runQueuedJobs() -> Bool {
        let queued = jobs.withLock { state -> [UnownedJob] in
            guard !state.queue.isEmpty else { return [] }
            defer { state.queue = [] }
            return state.queue
        }
        for job in queued { job.runSynchronously(on: asUnownedTaskExecutor()) }
        return !queued.isEmpty
    }

    /// After the I/O loop has ended: no more jobs are queued, and those still queued run
    /// on the global queue.
    func stopRunningJobs() {
        let left = jobs.withLock { state -> [UnownedJob] in
            state.accepting = false
            defer { state.queue.removeAll() }
            return state.queue
        }
        runElsewhere(left)
    }

    private func runElsewhere(_ queued: [UnownedJob]) {
        guard !queued.isEmpty else { return }
        let executor = asUnownedTaskExecutor()
        DispatchQueue.global().async {
            for job in queued { job.runSynchronously(on: executor) }
        }
    }
}

/// The jobs waiting for the I/O thread.
struct IOJobs {
    var queue: [UnownedJob] = []
    var accepting = true
}
