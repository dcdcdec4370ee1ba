import Dispatch

/// A task executor on a serial dispatch queue of its own, for CPU-heavy test work (the fuzzers
/// that parse thousands of inputs): under `withTaskExecutorPreference` the work, its child tasks
/// and the default actors they call leave Swift's cooperative pool alone, while the test's task
/// (and so `#expect`) stays the same. On a 2-core machine that pool has two threads; a fuzzer
/// holding one for tens of seconds starved the timers, replay clocks and child-process readers of
/// the tests running beside it. A serial queue with a label runs on libdispatch's overcommitting
/// pool, not on the cooperative one (which, like `DispatchQueue.global()`, is as wide as the
/// machine has cores).
public final class OffPoolExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    /// A new queue named `name`.
    public init(name: String) { queue = DispatchQueue(label: name) }

    /// Runs a job of a task that prefers this executor, on the queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `work` (synchronous or not) on a new executor of this kind, in the calling task.
    public static func run<T: Sendable>(_ name: String, _ work: @Sendable () async throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(OffPoolExecutor(name: name)) { try await work() }
    }
}
