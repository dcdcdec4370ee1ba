import Foundation
import Beekon

/// The SDK clock during a replay (SRC-4): "now" is the timestamp of the fix
/// just delivered, and between fixes and after the last one time flows at the
/// real rate from there. Before the first fix it is the real time.
///
/// Once the replay has started the clock never goes backwards: a fix older
/// than the current "now" (a track whose time goes backwards, or a slow
/// consumer) leaves it where it is.
///
/// `sleep(for:)` wakes when this clock's "now" passes the deadline, whether
/// real time passes or a replay jumps forward: a 300 s sleep during a
/// max-speed replay ends as soon as the delivered fixes' times pass it, and
/// after the replay ends it waits real seconds. A sleep begun before the first
/// fix keeps its remaining duration across that first jump to the track's
/// time. Sleeps throw `CancellationError` when their task is cancelled.
public final class ReplayClock: BeekonClock, Sendable {
    /// The real clock: where real time comes from, and what real waits sleep on.
    public let realClock: any BeekonClock

    private struct Waiter {
        var deadline: TimeInterval
        var continuation: CheckedContinuation<Void, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        /// Replay time and real time at the last delivered fix; nil before the first.
        var anchor: (replay: TimeInterval, real: TimeInterval)?
        var waiters: [UInt64: Waiter] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0

        func now(real: TimeInterval) -> TimeInterval {
            guard let a = anchor else { return real }
            return a.replay + max(0, real - a.real)
        }
    }

    private let state = Locked(State())

    /// Creates a replay clock whose real time and real sleeps come from `realClock`.
    public init(realClock: any BeekonClock = SystemClock()) {
        self.realClock = realClock
    }

    /// The replay's current time.
    public func now() -> Date {
        let real = realClock.now().timeIntervalSince1970
        return Date(timeIntervalSince1970: state.withLock { $0.now(real: real) })
    }

    /// The real time, whatever the replay's position.
    public func realNow() -> Date { realClock.now() }

    /// Whether a fix has been delivered (the clock follows the track).
    public var hasStarted: Bool { state.withLock { $0.anchor != nil } }

    /// How many `sleep(for:)` calls are waiting (for tests and diagnostics).
    public var sleeperCount: Int { state.withLock { $0.waiters.count } }

    /// Moves "now" to a delivered fix's timestamp (never backwards once started)
    /// and wakes the sleepers whose deadline it passes.
    public func advance(to fixTime: Date) {
        let real = realClock.now().timeIntervalSince1970
        let target = fixTime.timeIntervalSince1970
        let (due, pending) = state.withLock { s -> ([CheckedContinuation<Void, any Error>], [UInt64]) in
            let before = s.now(real: real)
            let newNow: TimeInterval
            if s.anchor == nil {
                newNow = target
                for id in s.waiters.keys { s.waiters[id]?.deadline += newNow - before }
            } else {
                newNow = max(target, before)
            }
            s.anchor = (newNow, real)
            var due: [CheckedContinuation<Void, any Error>] = []
            var pending: [UInt64] = []
            for (id, w) in s.waiters {
                if w.deadline <= newNow {
                    w.timer?.cancel()
                    s.waiters[id] = nil
                    due.append(w.continuation)
                } else {
                    pending.append(id)
                }
            }
            return (due, pending)
        }
        for c in due { c.resume() }
        // Time jumped forward: the pending sleepers' real waits are now shorter.
        for id in pending { schedule(id) }
    }

    /// Suspends until this clock's "now" passes `now() + duration`.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let seconds = duration.seconds
        guard seconds > 0 else { return }
        let deadline = now().timeIntervalSince1970 + seconds
        let id = state.withLock { s -> UInt64 in s.nextID += 1; return s.nextID }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let registered = state.withLock { s -> Bool in
                    if s.cancelledEarly.remove(id) != nil { return false }
                    s.waiters[id] = Waiter(deadline: deadline, continuation: c)
                    return true
                }
                if registered { schedule(id) } else { c.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let c = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard let w = s.waiters.removeValue(forKey: id) else {
                    s.cancelledEarly.insert(id)
                    return nil
                }
                w.timer?.cancel()
                return w.continuation
            }
            c?.resume(throwing: CancellationError())
        }
    }

    /// (Re)starts the real-time wait of a sleeper, replacing its previous one.
    private func schedule(_ id: UInt64) {
        let timer = Task { await self.runTimer(id) }
        let stale = state.withLock { s -> Task<Void, Never>? in
            guard s.waiters[id] != nil else { return timer }
            let old = s.waiters[id]?.timer
            s.waiters[id]?.timer = timer
            return old
        }
        stale?.cancel()
    }

    private func runTimer(_ id: UInt64) async {
        while !Task.isCancelled {
            let real = realClock.now().timeIntervalSince1970
            let remaining = state.withLock { s -> TimeInterval? in
                guard let w = s.waiters[id] else { return nil }
                return w.deadline - s.now(real: real)
            }
            guard let remaining else { return }
            if remaining <= 0 {
                let c = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                    s.waiters.removeValue(forKey: id)?.continuation
                }
                c?.resume()
                return
            }
            do { try await realClock.sleep(for: .seconds(remaining)) } catch { return }
        }
    }
}
