import Beekon
import BeekonPrimitives
import Foundation

/// The one-shot `currentLocation` a locate request needs (BY-2), for the streaming sources
/// the SDK ships (gpsd, NMEA, replay): while the source runs, a request waits for the next
/// fix it delivers (a fresh one, never a cached one); when nothing runs, the source is
/// started for its first fix and stopped again. The power mode is left as it is (a paused
/// source stays paused: the request waits for the probe's fix or its timeout).
final class FreshFixes: Sendable {
    private struct State {
        var running = false
        /// The current run (a stopped run's tap may end after the next run started).
        var run: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<RawFix?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Locked(State())
    /// The clock the request's timeout runs on (real time, also during a replay).
    let clock: any BeekonClock

    init(clock: any BeekonClock) {
        self.clock = clock
    }

    /// A run started: requests from now on wait for its fixes. Returns the run's number.
    @discardableResult
    func started() -> UInt64 {
        state.withLock { s in
            s.running = true
            s.run += 1
            return s.run
        }
    }

    /// A fix of the running source: every waiting request takes it.
    func delivered(_ fix: RawFix) {
        for w in takeWaiters() { w.resume(returning: fix) }
    }

    /// The run ended (stopped, finished or failed; `run` nil: whichever runs): waiting
    /// requests get nil. A run that was already replaced changes nothing.
    func ended(run: UInt64? = nil) {
        let waiters = state.withLock { s -> [CheckedContinuation<RawFix?, Never>] in
            guard run == nil || run == s.run else { return [] }
            s.running = false
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume(returning: nil) }
    }

    /// `upstream` passed through, each fix also `delivered`, its end `ended`.
    func tap(_ upstream: AsyncThrowingStream<RawFix, any Error>) -> AsyncThrowingStream<RawFix, any Error> {
        let run = started()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: RawFix.self)
        let task = Task {
            do {
                for try await fix in upstream {
                    self.delivered(fix)
                    continuation.yield(fix)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            self.ended(run: run)
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The next fresh fix within `timeout`: the running source's next one, else the first
    /// of a run `start`ed for it (and `stop`ped after); nil when none arrives in time.
    func next(
        timeout: Duration,
        start: @Sendable () async throws -> AsyncThrowingStream<RawFix, any Error>,
        stop: @Sendable @escaping () async -> Void
    ) async throws -> RawFix? {
        guard state.withLock({ $0.running }) else { return try await first(of: start(), timeout: timeout, stop: stop) }
        let id = state.withLock { s -> UInt64 in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withCheckedContinuation { continuation in
            state.withLock { $0.waiters[id] = continuation }
            // Registered first, so the timeout can never fire before the waiter exists.
            Task { [clock] in
                try? await clock.sleep(for: timeout)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
            }
        }
    }

    /// The first fix of a run started for one request, then the run stopped.
    private func first(
        of stream: AsyncThrowingStream<RawFix, any Error>, timeout: Duration, stop: @Sendable @escaping () async -> Void
    ) async throws -> RawFix? {
        defer { Task { await stop() } }
        let clock = self.clock
        return try await withThrowingTaskGroup(of: RawFix?.self) { group in
            group.addTask {
                for try await fix in stream { return fix }
                return nil
            }
            group.addTask {
                try? await clock.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func takeWaiters() -> [CheckedContinuation<RawFix?, Never>] {
        state.withLock { s in
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
    }
}
