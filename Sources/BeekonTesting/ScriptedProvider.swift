import Beekon
import BeekonPrimitives
import Foundation

/// A location source driven by the test. `send(_:)` returns once the SDK has
/// finished processing that fix (it asked for the next one), so tests need no
/// sleeps; `finish()` ends the stream like the end of a replay; `fail(_:)`
/// fails it like a source that went away.
public actor ScriptedProvider: LocationProvider {
    private enum Item {
        case fix(RawFix)
        case end
        case failure(any Error)
    }

    private var queue: [(item: Item, waiter: CheckedContinuation<Void, Never>?)] = []
    private var puller: CheckedContinuation<RawFix?, any Error>?
    /// Senders whose fix was handed to the consumer; released when it asks for the next one.
    private var deliveredWaiters: [CheckedContinuation<Void, Never>] = []
    private var running = false

    /// Error thrown by the next `start(mode:)`, if set.
    public var startError: LocationProviderError?
    /// Every power mode the SDK asked for, in order (start modes included).
    public private(set) var powerModes: [PowerMode] = []
    /// How many times the SDK started the source.
    public private(set) var startCount = 0
    /// How many times the SDK stopped the source.
    public private(set) var stopCount = 0
    /// Fix returned by `currentLocation(timeout:mode:)`.
    public var oneShotFix: RawFix?

    /// Creates a provider with nothing scripted.
    public init() {}

    /// Makes the next `start(mode:)` fail with `error` (nil: succeed).
    public func failNextStart(with error: LocationProviderError?) { startError = error }

    /// Sets the fix `currentLocation` returns.
    public func setOneShotFix(_ fix: RawFix?) { oneShotFix = fix }

    /// Whether the SDK is consuming fixes now.
    public var isRunning: Bool { running }

    public func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        if let startError {
            self.startError = nil
            throw startError
        }
        startCount += 1
        powerModes.append(mode)
        running = true
        releaseAll()
        puller?.resume(returning: nil)  // a previous run's stream ends
        puller = nil
        return AsyncThrowingStream(unfolding: { [weak self] in
            guard let self else { return nil }
            return try await self.pull()
        })
    }

    public func setPowerMode(_ mode: PowerMode) async { powerModes.append(mode) }

    public func stop() async {
        stopCount += 1
        running = false
        releaseAll()
        puller?.resume(returning: nil)
        puller = nil
    }

    public func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? { oneShotFix }

    private let health = AsyncStream.makeStream(of: LocationHealth.self)

    /// Reports `health` as the platform would (e.g. iOS 18's `insufficientlyInUse`).
    public func report(_ health: LocationHealth) { self.health.continuation.yield(health) }

    public func healthChanges() async -> AsyncStream<LocationHealth>? { health.stream }

    private let retakes = Locked(0)

    /// How many times the host's launch call asked to retake sessions.
    public nonisolated var sessionRetakes: Int { retakes.value }

    public nonisolated func retakeSessionsAtLaunch() { retakes.withLock { $0 += 1 } }

    /// Delivers one fix and waits until the SDK has processed it. Returns at once when not running.
    public func send(_ fix: RawFix) async {
        guard running else { return }
        await withCheckedContinuation { enqueue(.fix(fix), waiter: $0) }
    }

    /// Delivers several fixes, each processed before the next.
    public func send(_ fixes: [RawFix]) async {
        for f in fixes { await send(f) }
    }

    /// Ends the stream normally (the source is exhausted).
    public func finish() { enqueue(.end, waiter: nil) }

    /// Fails the stream with `error`.
    public func fail(_ error: any Error) { enqueue(.failure(error), waiter: nil) }

    private func enqueue(_ item: Item, waiter: CheckedContinuation<Void, Never>?) {
        if let p = puller {
            puller = nil
            if let waiter { deliveredWaiters.append(waiter) }
            deliver(item, to: p)
        } else {
            queue.append((item, waiter))
        }
    }

    private func deliver(_ item: Item, to p: CheckedContinuation<RawFix?, any Error>) {
        switch item {
        case .fix(let f): p.resume(returning: f)
        case .end:
            running = false
            p.resume(returning: nil)
        case .failure(let e):
            running = false
            p.resume(throwing: e)
        }
    }

    private func pull() async throws -> RawFix? {
        // The consumer asks for the next element: every fix delivered before is processed.
        let done = deliveredWaiters
        deliveredWaiters = []
        for w in done { w.resume() }
        guard running || !queue.isEmpty else { return nil }
        if !queue.isEmpty {
            let (item, waiter) = queue.removeFirst()
            if let waiter { deliveredWaiters.append(waiter) }
            return try await withCheckedThrowingContinuation { deliver(item, to: $0) }
        }
        return try await withCheckedThrowingContinuation { puller = $0 }
    }

    /// Releases every waiting sender (the stream is restarting or stopping).
    private func releaseAll() {
        let waiters = deliveredWaiters + queue.compactMap(\.waiter)
        deliveredWaiters = []
        queue.removeAll()
        for w in waiters { w.resume() }
    }
}
