import EarshotService
import Testing

@Suite("A service's background tasks")
struct BackgroundTasksTests {
    @Test func finishedTasksAreForgotten() async throws {
        let tasks = BackgroundTasks()
        for _ in 0 ..< 1000 { tasks.run {} }
        let deadline = ContinuousClock.now + .seconds(10)
        while tasks.count > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(tasks.count == 0)
    }

    @Test func cancellingEndsWhatStillRuns() async throws {
        let tasks = BackgroundTasks()
        let (ended, continuation) = AsyncStream<Bool>.makeStream()
        for _ in 0 ..< 3 {
            tasks.run {
                let cancelled = (try? await Task.sleep(for: .seconds(600))) == nil
                continuation.yield(cancelled)
            }
        }
        #expect(tasks.count == 3)
        tasks.cancelAll()
        #expect(tasks.count == 0)
        var outcomes: [Bool] = []
        for await outcome in ended {
            outcomes.append(outcome)
            if outcomes.count == 3 { break }
        }
        #expect(outcomes == [true, true, true])
    }
}
