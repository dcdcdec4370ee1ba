import Beekon
import Foundation

/// Gives the agent's streaming sources (gpsd, NMEA, replay) the one-shot
/// `currentLocation` a locate request needs (BY-2): while tracking runs it waits for the
/// next fix the source delivers (a fresh one, never a cached one); when nothing runs it
/// starts the source, takes its first fix and stops it again. The tracking mode is left
/// as it is (a paused source stays paused).
final class FreshFixProvider: LocationProvider, @unchecked Sendable {
    private let inner: any LocationProvider
    private let clock: any BeekonClock
    private let lock = NSLock()
    private var running = false
    private var waiters: [UInt64: CheckedContinuation<RawFix?, Never>] = [:]
    private var nextWaiter: UInt64 = 0

    init(_ inner: any LocationProvider, clock: any BeekonClock) {
        self.inner = inner
        self.clock = clock
    }

    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        let upstream = try await inner.start(mode: mode)
        lock.withLock { running = true }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: RawFix.self)
        let task = Task {
            do {
                for try await fix in upstream {
                    self.deliver(fix)
                    continuation.yield(fix)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
            self.lock.withLock { self.running = false }
            self.deliver(nil)
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func setPowerMode(_ mode: PowerMode) async { await inner.setPowerMode(mode) }

    func stop() async {
        await inner.stop()
        lock.withLock { running = false }
        deliver(nil)
    }

    func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
        if let own = try await inner.currentLocation(timeout: timeout, mode: mode) { return own }
        guard lock.withLock({ running }) else { return try await firstFix(timeout: timeout, mode: mode) }
        let id = lock.withLock { () -> UInt64 in
            nextWaiter += 1
            return nextWaiter
        }
        return await withCheckedContinuation { continuation in
            lock.withLock { waiters[id] = continuation }
            // Registered first, so the timeout can never fire before the waiter exists.
            Task { [clock] in
                try? await clock.sleep(for: timeout)
                self.resume(id, with: nil)
            }
        }
    }

    /// Starts the idle source for one fix.
    private func firstFix(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
        let stream = try await inner.start(mode: mode)
        defer { Task { await inner.stop() } }
        return try await withThrowingTaskGroup(of: RawFix?.self) { group in
            group.addTask {
                for try await fix in stream { return fix }
                return nil
            }
            group.addTask {
                try? await self.clock.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func deliver(_ fix: RawFix?) {
        let all = lock.withLock { () -> [CheckedContinuation<RawFix?, Never>] in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for w in all { w.resume(returning: fix) }
    }

    private func resume(_ id: UInt64, with fix: RawFix?) {
        let w = lock.withLock { waiters.removeValue(forKey: id) }
        w?.resume(returning: fix)
    }
}
