import Dispatch

/// A task executor on a serial dispatch queue of its own, for CPU-heavy async test work (the
/// in-process fuzzer): run under `withTaskExecutorPreference`, the work, its child tasks and
/// the default actors they call leave Swift's cooperative pool alone. On a 2-core machine that
/// pool has two threads, and a fuzzer holding both for tens of seconds starved the timers and
/// in-process servers of every other test running beside it. A serial queue with a label gets
/// a thread of libdispatch's overcommitting pool, not one of the cooperative pool's (which, like
/// `DispatchQueue.global()`, is as wide as the machine has cores). The async counterpart of
/// ``blocking(_:)``.
final class OffPoolExecutor: TaskExecutor, Sendable {
    private let queue: DispatchQueue

    init(name: String) { queue = DispatchQueue(label: name) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `work` with a new executor of this kind preferred.
    static func run<T: Sendable>(_ name: String, _ work: @Sendable () async throws -> T) async rethrows -> T {
        try await withTaskExecutorPreference(OffPoolExecutor(name: name)) { try await work() }
    }
}
