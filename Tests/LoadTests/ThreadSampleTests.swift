import Dispatch
import EarshotSync
import EarshotTestHarness
import Glibc
import Testing

/// `ThreadSample` reads the scheduler's counts for each thread of a process (what the
/// capture benchmark divides to get a thread's CPU per wake-up): a thread that sleeps and
/// wakes 30 times between two samples shows at least 30 more runs and voluntary switches,
/// some more CPU time, and its own name and id.
@Test func threadSampleCountsEachWakeUpOfAThread() throws {
    let ready = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0), leave = DispatchSemaphore(value: 0)
    let name = "earshot-sampled"
    guard let thread = JoinableThread(name: name, {
        ready.signal()
        go.wait()
        for _ in 0..<30 { usleep(1000) }
        done.signal()
        leave.wait()
    }) else {
        Issue.record("the thread could not be started")
        return
    }
    ready.wait()
    let before = ThreadSample.all(of: getpid()).first { $0.name == name }
    go.signal()
    done.wait()
    let after = ThreadSample.all(of: getpid()).first { $0.name == name }
    leave.signal()
    thread.join()

    let first = try #require(before, "the named thread is not among the process's threads")
    let second = try #require(after)
    #expect(second.tid == first.tid)
    #expect(second.runs >= first.runs + 30)
    #expect(second.runNanoseconds > first.runNanoseconds)
    #expect(second.voluntarySwitches >= first.voluntarySwitches + 30)
    #expect(ThreadSample.all(of: getpid()).contains { $0.tid == getpid() }, "the main thread is listed too")
}
