import EarshotSync
import Foundation
import Testing

@Suite struct TaskThreadPoolTests {
    /// The name of the thread running the caller.
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func tasksPreferringThePoolRunOnItsThreads() async {
        let pool = TaskThreadPool(name: "pool-a", width: 2)
        let names = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask(executorPreference: pool) {
                    usleep(2000)
                    return Self.threadName()
                }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(!names.isEmpty)
        #expect(names.isSubset(of: ["pool-a-0", "pool-a-1"]))
        #expect(pool.threadsStarted <= 2)
    }

    @Test func sleepsWaitInThePoolAndEndInDeadlineOrder() async throws {
        let pool = TaskThreadPool(name: "pool-b", width: 2)
        let woken = Locked<[Int]>([])
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for milliseconds in [600, 200, 400] {
                group.addTask(executorPreference: pool) {
                    try await Task.sleep(for: .milliseconds(milliseconds))
                    #expect(ContinuousClock.now - start >= .milliseconds(milliseconds))
                    #expect(Self.threadName().hasPrefix("pool-b-"))
                    woken.withLock { $0.append(milliseconds) }
                }
            }
            // While they sleep, the pool holds them (no other timer does). (Looked at until
            // all three have started, which takes a while on a loaded machine.)
            let looking = ContinuousClock.now + .milliseconds(150)
            while pool.queued.delayed < 3, ContinuousClock.now < looking { try await Task.sleep(for: .milliseconds(5)) }
            #expect(pool.queued.delayed == 3)
            try await group.waitForAll()
        }
        #expect(woken.withLock { $0 } == [200, 400, 600])
        #expect(pool.queued == (delayed: 0, ready: 0))
    }

    @Test func aCancelledSleepEndsAtOnce() async {
        let pool = TaskThreadPool(name: "pool-c", width: 2)
        let sleeper = Task(executorPreference: pool) { () -> Bool in
            do {
                try await Task.sleep(for: .seconds(3600))
                return false
            } catch {
                return error is CancellationError
            }
        }
        try? await Task.sleep(for: .milliseconds(30))
        let start = ContinuousClock.now
        sleeper.cancel()
        #expect(await sleeper.value)
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test func anIdlePoolDoesNotWake() async throws {
        let pool = TaskThreadPool(name: "pool-d", width: 2)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask(executorPreference: pool) { usleep(1000) } }
        }
        try await Task.sleep(for: .milliseconds(50))
        let before = Self.poolWakeUps(prefix: "pool-d-")
        #expect(!before.isEmpty)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(Self.poolWakeUps(prefix: "pool-d-") == before)
    }

    /// Times each of this process's threads named `prefix`… has been scheduled
    /// (`/proc/self/task/*/schedstat`, third field), by thread id.
    static func poolWakeUps(prefix: String) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var counts: [String: Int] = [:]
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                  let slices = stat.split(separator: " ").dropFirst(2).first.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            else { continue }
            counts[task] = slices
        }
        return counts
    }
}
