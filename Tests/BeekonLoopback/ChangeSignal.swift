import Foundation

/// How the fake servers, proxies and child processes of this repository's tests wait: a
/// version counter that `signal()` bumps after each change of the watched state, and
/// waiters that suspend until it moved past the version they saw — no polling, no sleeps.
/// Read `version` before reading the state it guards, then `changed(since:)`: a change in
/// between is never missed. Shared with the Server package through a symlink.
public final class ChangeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    /// A signal at version 0.
    public init() {}

    /// The number of changes so far.
    public var version: Int { lock.withLock { current } }

    /// Records a change and wakes every waiter.
    public func signal() {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            current += 1
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for c in ready { c.resume() }
    }

    /// Suspends until the version differs from `seen` (or the task is cancelled).
    public func changed(since seen: Int) async {
        let id: Int = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let ready: Bool = lock.withLock {
                    if current != seen || Task.isCancelled { return true }
                    waiters[id] = c
                    return false
                }
                if ready { c.resume() }
            }
        } onCancel: {
            let c = lock.withLock { waiters.removeValue(forKey: id) }
            c?.resume()
        }
    }

    /// Re-evaluates `check` after every change until it returns a value; nil when `timeout`
    /// passed first (the deadline is a bound on a test, never synchronisation).
    public func wait<T: Sendable>(timeout: Duration, _ check: @escaping @Sendable () throws -> T?) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { [self] in
                while true {
                    let seen = version
                    if let value = try check() { return value }
                    await changed(since: seen)
                    try Task.checkCancellation()
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }
}
