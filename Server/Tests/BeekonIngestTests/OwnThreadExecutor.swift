@testable import BeekonIngest
import Foundation

/// A task executor with one thread of its own, for CPU-heavy async test work (the in-process
/// fuzzers): run under `withTaskExecutorPreference`, the work and its child tasks (and the
/// default actors they call) leave Swift's cooperative pool alone. On a 2-core machine that
/// pool has two threads, and a fuzzer holding both for tens of seconds starved the timers and
/// in-process servers of every other test running beside it. The async counterpart of
/// ``blocking(_:)``; the thread ends with ``shutdown()``.
final class OwnThreadExecutor: TaskExecutor, Sendable {
    private let jobs = LockedBox<[UnownedJob]>([])
    private let ready = DispatchSemaphore(value: 0)
    private let stopped = LockedBox(false)

    init(name: String) {
        let thread = Thread { [jobs, ready, stopped] in
            while true {
                ready.wait()
                if let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
                    job.runSynchronously(on: self.asUnownedTaskExecutor())
                } else if stopped.get() {
                    return
                }
            }
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        ready.signal()
    }

    /// Ends the thread once the jobs enqueued before it have run (call after the work finished).
    func shutdown() {
        stopped.set(true)
        ready.signal()
    }

    /// Runs `work` with this executor preferred, then ends the thread.
    static func run<T: Sendable>(_ name: String, _ work: @Sendable () async throws -> T) async rethrows -> T {
        let executor = OwnThreadExecutor(name: name)
        defer { executor.shutdown() }
        return try await withTaskExecutorPreference(executor) { try await work() }
    }
}
