@_spi(ExperimentalCustomExecutors) import _Concurrency
import EarshotSync
import Glibc

/// Where a service's tasks run: its main actor on the main thread (`MainThreadExecutor`),
/// every other task on threads of its own (`TaskThreadPool`), in place of libdispatch's
/// global queues, which on Linux check their threads once a second for as long as the
/// process lives, from its first task on.
///
/// Swift 6.3 offers this partly as public API (`ExecutorFactory`, `SchedulingExecutor` for
/// `Task.sleep`) and partly as experimental SPI (`MainExecutor`, `RunLoopExecutor`,
/// `_createExecutors`), which may change in any release. So the build is pinned to the
/// toolchain these were checked against: another toolchain stops it here until this file,
/// `TaskThreadPool` and `MainThreadExecutor` have been checked against it (the executor
/// tests in EarshotDBusTests and EarshotSyncTests, then `earshot-bench footprint`'s
/// wake-ups at rest) and the pin moved. Nothing else names that SPI.
#if !compiler(>=6.3.1) || compiler(>=6.3.2)
#error("ServiceExecutors uses Swift 6.3.1's experimental executor SPI: check it (and TaskThreadPool, MainThreadExecutor) against this toolchain, then move this pin")
#endif
package enum ServiceExecutors: ExecutorFactory {
    /// As wide as the machine, at least two threads (one may be busy a while).
    static let pool = TaskThreadPool(name: "earshot-tasks", width: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
    static let main = MainThreadExecutor()

    package static var mainExecutor: any MainExecutor { main }
    package static var defaultExecutor: any TaskExecutor { pool }

    /// Installs the executors, runs `body` as the main task and exits when it returns.
    /// Call from a synchronous `main`, before anything else has used Swift concurrency.
    package static func run(_ body: @escaping @MainActor @Sendable () async -> Void) -> Never {
        _createExecutors(factory: ServiceExecutors.self)
        Task { @MainActor in
            await body()
            exit(0)
        }
        do {
            try main.run()
        } catch {}
        exit(0)
    }
}
