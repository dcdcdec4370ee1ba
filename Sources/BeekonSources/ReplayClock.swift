import BeekonPrimitives
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
    }

    private struct State {
        /// Replay time and real time at the last delivered fix; nil before the first.
        var anchor: (replay: TimeInterval, real: TimeInterval)?
        var waiters: [UInt64: Waiter] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
        /// The one task that waits real time for the earliest deadline.
        var driver: Task<Void, Never>?
        var driverID: UInt64 = 0
        /// The driver has not yet read the state: it will see the latest "now" anyway.
        var driverFresh = false

        func now(real: TimeInterval) -> TimeInterval {
            guard let a = anchor else { return real }
            return a.replay + max(0, real - a.real)
        }

        /// Removes the waiters whose deadline `now` has reached and returns them.
        mutating func takeDue(now: TimeInterval) -> [CheckedContinuation<Void, any Error>] {
            var due: [CheckedContinuation<Void, any Error>] = []
            for (id, w) in waiters where w.deadline <= now {
                waiters[id] = nil
                due.append(w.continuation)
            }
            return due
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
        let (due, stale) = state.withLock { s -> ([CheckedContinuation<Void, any Error>], Task<Void, Never>?) in
            let before = s.now(real: real)
            let newNow: TimeInterval
            if s.anchor == nil {
                newNow = target
                for id in s.waiters.keys { s.waiters[id]?.deadline += newNow - before }
            } else {
                newNow = max(target, before)
            }
            s.anchor = (newNow, real)
            let due = s.takeDue(now: newNow)
            // Time jumped forward: the real wait for the earliest deadline is shorter now.
            return (due, s.waiters.isEmpty ? nil : restartDriver(&s))
        }
        stale?.cancel()
        for c in due { c.resume() }
    }

    /// Suspends until this clock's "now" passes `now() + duration`.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let seconds = duration.seconds
        guard seconds > 0 else { return }
        let deadline = now().timeIntervalSince1970 + seconds
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let (registered, stale) = state.withLock { s -> (Bool, Task<Void, Never>?) in
                    if s.cancelledEarly.remove(id) != nil { return (false, nil) }
                    s.waiters[id] = Waiter(deadline: deadline, continuation: c)
                    return (true, restartDriver(&s))
                }
                stale?.cancel()
                if !registered { c.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let (c, stale) = state.withLock { s -> (CheckedContinuation<Void, any Error>?, Task<Void, Never>?) in
                guard let w = s.waiters.removeValue(forKey: id) else {
                    s.cancelledEarly.insert(id)
                    return (nil, nil)
                }
                guard s.waiters.isEmpty else { return (w.continuation, nil) }
                let driver = s.driver
                s.driver = nil
                s.driverFresh = false
                return (w.continuation, driver)
            }
            stale?.cancel()
            c?.resume(throwing: CancellationError())
        }
    }

    /// Starts a new driver (under the lock) unless a fresh one is about to read
    /// the state anyway; returns the replaced driver, to cancel outside the lock.
    private func restartDriver(_ s: inout State) -> Task<Void, Never>? {
        guard !s.driverFresh else { return nil }
        let old = s.driver
        s.driverID += 1
        let id = s.driverID
        s.driverFresh = true
        s.driver = Task { await self.drive(id) }
        return old
    }

    /// Waits real time until the earliest deadline, wakes the due sleepers, repeats; ends when none is left.
    private func drive(_ id: UInt64) async {
        while !Task.isCancelled {
            let real = realClock.now().timeIntervalSince1970
            let (due, wait) = state.withLock { s -> ([CheckedContinuation<Void, any Error>], TimeInterval?) in
                guard s.driverID == id else { return ([], nil) }
                s.driverFresh = false
                let now = s.now(real: real)
                let due = s.takeDue(now: now)
                guard let earliest = s.waiters.values.map(\.deadline).min() else {
                    s.driver = nil
                    return (due, nil)
                }
                return (due, earliest - now)
            }
            for c in due { c.resume() }
            guard let wait else { return }
            do { try await realClock.sleep(for: .seconds(wait)) } catch { return }
        }
    }
}
