import Dispatch

/// A connection is also a task executor that runs jobs on its I/O thread.
///
/// Code run there goes on right where its replies are read:
///
///     try await withTaskExecutorPreference(connection) {
///         for request in requests { _ = try await connection.call(request) }
///     }
///
/// (A call awaited from anywhere else has its own thread wait for the reply first, which
/// saves the same second wake-up: `CallerThreadWait`.) While such code runs, the connection
/// reads and dispatches nothing: keep it short, and never block in it (no disk, no waiting
/// on locks others hold for long). Once the connection has closed, its jobs run on
/// Dispatch's global queue instead.
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
    ///
    /// `spare` is the I/O loop's own empty array: it takes the queued jobs' place under the
    /// lock and gets them in exchange, then is emptied keeping its room, so that the two
    /// arrays trade places turn after turn and queueing a job allocates nothing.
    func runQueuedJobs(swapping spare: inout [UnownedJob]) -> Bool {
        jobs.withLock { state in
            if !state.queue.isEmpty { swap(&state.queue, &spare) }
        }
        if spare.isEmpty { return false }
        let executor = asUnownedTaskExecutor()
        for job in spare { job.runSynchronously(on: executor) }
        spare.removeAll(keepingCapacity: true)
        return true
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
