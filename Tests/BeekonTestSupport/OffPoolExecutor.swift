import Dispatch

/// A task executor on a serial dispatch queue of its own, for CPU-heavy test work (the fuzzers
/// that parse thousands of inputs): under `withTaskExecutorPreference` the work, its child tasks
/// and the default actors they call leave Swift's cooperative pool alone, while the test's task
/// (and so `#expect`) stays the same. On a 2-core machine that pool has two threads; a fuzzer
/// holding one for tens of seconds starved the timers, replay clocks and child-process readers of
/// the tests running beside it. A serial queue with a label runs on libdispatch's overcommitting
/// pool, not on the cooperative one (which, like `DispatchQueue.global()`, is as wide as the
/// machine has cores).
///
/// Task executors are `@available(macOS 15.0, iOS 18.0, …)` in the standard library's
/// interface (`withTaskExecutorPreference`, `TaskExecutor`); below those versions (the SDK's
/// tests also run on iOS 16 / macOS 13) the work runs on the cooperative pool as before.
public enum OffPoolExecutor {
    /// Runs `work` (synchronous or not) on a new queue executor, in the calling task.
    public static func run<T: Sendable>(_ name: String, _ work: @Sendable () async throws -> T) async rethrows -> T {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
            return try await withTaskExecutorPreference(QueueTaskExecutor(name: name)) { try await work() }
        }
        return try await work()
    }
}

/// The executor behind ``OffPoolExecutor``: every job on one serial dispatch queue.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
public final class QueueTaskExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    /// A new queue named `name`.
    public init(name: String) { queue = DispatchQueue(label: name) }

    /// Runs a job of a task that prefers this executor, on the queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
