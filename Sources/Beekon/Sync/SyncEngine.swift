import BeekonWire
import Foundation
import Logging

/// What woke the drain loop (SY-3).
enum SyncTrigger: Sendable, Hashable {
    case interval, manual, configure, geofenceEvent, sessionStopped, threshold, retry, checkIn
}

/// What the sync engine reports to its owner, in order, on `SyncEngine.events`: it never
/// calls back into the `Beekon` actor.
enum SyncEvent: Sendable, Equatable {
    /// An accepted upload's answer listed these locate requests (BY-2: delivery piggybacked
    /// on the ingest response, a must-ignore field old SDKs skip).
    case locateRequested([UUID])
}

/// The one outbound loop (SY-3..7): triggers only wake it, wakes during a drain
/// coalesce into the next pass, each pass sends batches until the queue is empty
/// or a batch fails, and every outcome is classified by `StatusPolicy`.
actor SyncEngine {
    /// Why the loop is holding back between drains.
    enum Hold: Sendable, Equatable {
        /// Transient failure: wait for the backoff deadline (or `sync()`/`configure()`).
        case backoff(until: Date)
        /// Permanent failure: wait for the next interval, `sync()` or `configure()`.
        case permanent
        /// Dead refresh credentials (AU-5): send nothing until `configure()` re-seeds.
        case authDead
    }

    let config: SyncConfig
    let store: LocationStore
    let transport: any HTTPTransport
    let clock: any BeekonClock
    let makeID: @Sendable () -> UUID
    private let randomUnit: @Sendable () -> Double
    let status: Broadcast<SyncStatus>
    let logger: Logger
    /// The envelope's `device` object; its check-in interval follows the configuration.
    private(set) var device: WireDevice
    /// The token refresher when `config.auth` is set (AU-1..9).
    let auth: TokenRefresher?
    private let backoff = Backoff()
    /// How long the host lets a drain run (iOS background time); see `SyncEngine+Budget`.
    let budget: any ExecutionBudget

    private var triggers: Set<SyncTrigger> = []
    private var waiting: CheckedContinuation<Void, Never>?
    private var queuedWaiters: [CheckedContinuation<SyncOutcome, Never>] = []
    /// What the current drain has done so far (counts, failure); handed to `sync()` callers.
    var drainOutcome = SyncOutcome()
    private var loopTask: Task<Void, Never>?
    private var intervalTask: Task<Void, Never>?
    var retryTask: Task<Void, Never>?
    var hold: Hold?
    var consecutiveFailures = 0
    private(set) var stopped = false
    /// What happened that the owner acts on (`SyncEvent`); finishes at `shutdown()`.
    nonisolated let events: AsyncStream<SyncEvent>
    /// Feeds `events`; never blocks the drain (unbounded: locate notices are rare).
    let reportEvent: AsyncStream<SyncEvent>.Continuation

    init(
        config: SyncConfig, store: LocationStore, transport: any HTTPTransport, clock: any BeekonClock,
        makeID: @escaping @Sendable () -> UUID, randomUnit: @escaping @Sendable () -> Double,
        status: Broadcast<SyncStatus>, logger: Logger, installID: UUID, auth: TokenRefresher? = nil,
        budget: any ExecutionBudget = UnlimitedExecutionBudget()
    ) {
        self.auth = auth
        self.budget = budget
        (events, reportEvent) = AsyncStream.makeStream(of: SyncEvent.self)
        self.config = config
        self.store = store
        self.transport = transport
        self.clock = clock
        self.makeID = makeID
        self.randomUnit = randomUnit
        self.status = status
        self.logger = logger
        self.device = WireDevice(
            installId: installID, platform: DeviceInfo.platform,
            sdkVersion: DeviceInfo.sdkVersion, model: DeviceInfo.model,
            syncIntervalSeconds: Int(config.effectiveIntervalSeconds.rounded()))
    }

    /// Declares the stationary check-in interval in later envelopes
    /// (`device.check_in_interval_seconds`, nil: omitted), so the server's staleness
    /// expects a checking-in device no more often than that (BY-8).
    func declareCheckInInterval(_ seconds: Int?) { device.checkInIntervalSeconds = seconds }

    /// Starts the loop and the interval timer.
    func start() {
        guard loopTask == nil, !stopped else { return }
        loopTask = Task { await self.loop() }
        let interval = Duration.milliseconds(Int64(config.effectiveIntervalSeconds * 1000))
        intervalTask = Task { [clock] in
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                self.wake(.interval)
            }
        }
    }

    /// Stops the loop and timers; an in-flight request finishes or times out on its own,
    /// and its batch is re-sent with the same id by the next engine.
    func shutdown() async {
        stopped = true
        loopTask?.cancel()
        intervalTask?.cancel()
        retryTask?.cancel()
        waiting?.resume()
        waiting = nil
        for w in queuedWaiters { w.resume(returning: SyncOutcome()) }
        queuedWaiters = []
        reportEvent.finish()
        await auth?.shutdown()
    }

    /// Wakes the loop; coalesces with other wakes.
    func wake(_ trigger: SyncTrigger) {
        guard !stopped else { return }
        triggers.insert(trigger)
        waiting?.resume()
        waiting = nil
    }

    /// `sync()`: wakes the loop and returns what the drain it caused did (`pending` is
    /// filled in by the caller).
    func syncNow() async -> SyncOutcome {
        guard !stopped else { return SyncOutcome() }
        return await withCheckedContinuation { c in
            queuedWaiters.append(c)
            wake(.manual)
        }
    }

    /// A regular fix was stored: wake early when `syncThreshold` fixes are pending (SY-3).
    func fixStored() async {
        guard config.syncThreshold >= 1, !stopped else { return }
        guard let pending = try? await store.pendingLocationCount(), pending >= config.syncThreshold else { return }
        wake(.threshold)
    }

    private func loop() async {
        while !Task.isCancelled && !stopped {
            if triggers.isEmpty {
                await withCheckedContinuation { waiting = $0 }
                continue
            }
            let current = triggers
            triggers = []
            let waiters = queuedWaiters
            queuedWaiters = []
            drainOutcome = SyncOutcome()
            if allowed(current) { await drainWithinBudget() }
            if case .backoff(let until) = hold, case .transient = drainOutcome.failure { drainOutcome.nextAttempt = until }
            for w in waiters { w.resume(returning: drainOutcome) }
        }
    }

    /// Whether these triggers may start a drain given the current hold.
    private func allowed(_ t: Set<SyncTrigger>) -> Bool {
        if t.contains(.manual) || t.contains(.configure) { return true }
        switch hold {
        case nil: return true
        case .backoff(let until): return clock.now() >= until
        case .permanent: return t.contains(.interval)
        case .authDead: return false
        }
    }

    /// Publishes a status and persists it for `beekon status` (best effort).
    /// Stored first, then published: whoever reacts to the status (an agent about to exit)
    /// finds the database work of this outcome done.
    func report(_ new: SyncStatus) async {
        if case .failed(let failure) = new { drainOutcome.failure = .held(failure) }
        try? await store.setLastSyncOutcome("\(new)")
        status.publish(new)
    }

    /// Holds uploads until the backoff (or `Retry-After`) deadline, stores then publishes
    /// `retrying`, and arms the timer that wakes the loop then.
    func scheduleRetry(_ why: String, retryAfter: Duration? = nil) async {
        drainOutcome.failure = .transient(why)
        // A server-dictated wait (Retry-After) is honoured as given and does not escalate the backoff.
        if retryAfter == nil { consecutiveFailures += 1 }
        let delay = retryAfter ?? backoff.delay(attempt: consecutiveFailures, random: randomUnit())
        logger.info("upload retry scheduled", metadata: ["reason": "\(why)", "backoff_seconds": "\(delay.seconds)"])
        let until = clock.now().addingTimeInterval(delay.seconds)
        hold = .backoff(until: until)
        await report(.retrying(nextAttempt: until))
        retryTask?.cancel()
        retryTask = Task { [clock] in
            do { try await clock.sleep(for: delay) } catch { return }
            self.wake(.retry)
        }
    }
}
