import BeekonPrimitives

/// Opens once the store is migrated (issue 50). The background services that read or write its
/// tables wait for it, so that a fresh start never touches a table before it exists: the
/// overview's rebuild ran before the migration and logged `no such table:
/// track_overview_buckets` on every fresh SQLite start. A wait ends early when its task is
/// cancelled (a shutdown before the migration finished).
final class StoreReadiness: Sendable {
    private struct State {
        var open = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// A readiness that is not open yet.
    init() {}

    /// Opens it: every wait ends, now and later.
    func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether it is open.
    var isOpen: Bool { state.withLock { $0.open } }

    /// Returns once it is open, or when the task is cancelled.
    func wait() async {
        let key = state.withLock { s -> Int? in
            guard !s.open else { return nil }
            s.next += 1
            return s.next
        }
        guard let key else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.open || Task.isCancelled { return true }
                    s.waiters[key] = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: key) }?.resume()
        }
    }
}
