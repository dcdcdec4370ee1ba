import Foundation

/// Runs an operation with a hard time limit that holds even when the operation ignores
/// cancellation (a time limit on store operations; the tests' `Deadline` is a wait): a task group would wait for such a child after its deadline (postgres-nio's
/// pool lease, waiting for a connection to a database that is gone, is one), and a server's
/// graceful shutdown would wait with it. Here the caller resumes at the deadline (or when it
/// is cancelled itself); the operation is cancelled and left to finish on its own.
enum OperationTimeout {
    static func run<T: Sendable>(
        _ limit: Duration, onExpiry expired: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = OneOutcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.begin(continuation)
                let work = Task {
                    do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    guard !Task.isCancelled else { return }
                    outcome.finish(.failure(expired()))
                    work.cancel()
                }
                outcome.onFinish { timer.cancel() }
                outcome.onCancel { work.cancel() }
            }
        } onCancel: {
            outcome.cancel()
        }
    }
}

/// The first of the operation's result, the deadline and the caller's cancellation, delivered once.
private final class OneOutcome<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var result: Result<T, any Error>?
    private var finishers: [@Sendable () -> Void] = []
    private var cancellers: [@Sendable () -> Void] = []
    private var cancelled = false

    /// Keeps the caller's continuation; resumes it at once if the outcome came first (a caller
    /// cancelled before it suspended).
    func begin(_ c: CheckedContinuation<T, any Error>) {
        let early = lock.withLock { () -> Result<T, any Error>? in
            if result == nil { continuation = c }
            return result
        }
        if let early { c.resume(with: early) }
    }

    func finish(_ r: Result<T, any Error>) {
        let (c, then): (CheckedContinuation<T, any Error>?, [@Sendable () -> Void]) = lock.withLock {
            guard result == nil else { return (nil, []) }
            result = r
            defer { continuation = nil }
            return (continuation, finishers)
        }
        c?.resume(with: r)
        for f in then { f() }
    }

    func onFinish(_ f: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if result != nil { return true }
            finishers.append(f)
            return false
        }
        if now { f() }
    }

    func onCancel(_ f: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if cancelled { return true }
            cancellers.append(f)
            return false
        }
        if now { f() }
    }

    func cancel() {
        let then = lock.withLock { () -> [@Sendable () -> Void] in
            cancelled = true
            return cancellers
        }
        for f in then { f() }
        finish(.failure(CancellationError()))
    }
}
