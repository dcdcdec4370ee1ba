import BeekonWire
import Foundation
import Logging

/// What woke the drain loop (SY-3).
enum SyncTrigger: Sendable, Hashable {
    case interval, manual, configure, geofenceEvent, sessionStopped, threshold, retry, checkIn
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
    private let makeID: @Sendable () -> UUID
    private let randomUnit: @Sendable () -> Double
    let status: Broadcast<SyncStatus>
    let logger: Logger
    private let device: WireDevice
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
    private var stopped = false
    /// Called with the locate requests an accepted upload's answer listed (BY-2: delivery
    /// piggybacked on the ingest response, a must-ignore field old SDKs skip).
    var onLocateRequests: (@Sendable ([UUID]) -> Void)?

    init(
        config: SyncConfig, store: LocationStore, transport: any HTTPTransport, clock: any BeekonClock,
        makeID: @escaping @Sendable () -> UUID, randomUnit: @escaping @Sendable () -> Double,
        status: Broadcast<SyncStatus>, logger: Logger, installID: UUID, auth: TokenRefresher? = nil,
        budget: any ExecutionBudget = UnlimitedExecutionBudget()
    ) {
        self.auth = auth
        self.budget = budget
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

    /// Sets the handler for locate requests listed in upload answers.
    func setLocateRequestHandler(_ handler: @escaping @Sendable ([UUID]) -> Void) { onLocateRequests = handler }

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

    /// Sends batches until the queue is empty or one fails. While a full batch is in flight
    /// the next one is assembled (persisted) and encoded, and the one before it is marked
    /// acknowledged, so the database work and the compression overlap the network and the
    /// server. A batch is sent only after the server accepted the one before it (SY-4
    /// order); its local acknowledgement may still be committing, and if that commit fails
    /// the batch stays queued under its id and goes again later (the server dedupes it).
    /// If the drain stops first, a prepared batch stays persisted and goes out, same id,
    /// after its predecessor on the next drain.
    func drain(within lease: any ExecutionLease) async {
        status.publish(.inFlight)
        var next: PreparedBatch?
        var acknowledging: Acknowledgement?
        while !stopped {
            let current: PreparedBatch
            if let prepared = next {
                current = prepared
                next = nil
            } else {
                // Nothing prepared: the last acknowledgement must be committed first, or the
                // assembly would find that batch still open and pick it again.
                guard await settle(&acknowledging) else {
                    await scheduleRetry("could not record an accepted upload")
                    return
                }
                do {
                    guard
                        let prepared = try await Self.prepare(
                            store: store, excluding: [], config: config, device: device,
                            now: clock.now(), makeID: makeID)
                    else {
                        hold = nil
                        consecutiveFailures = 0
                        await report(.succeeded(at: clock.now()))
                        return
                    }
                    current = prepared
                } catch {
                    logger.error("could not assemble a batch", metadata: ["error": "\(error)"])
                    await scheduleRetry("could not assemble a batch: \(error)")
                    return
                }
            }
            var prefetch: Task<PreparedBatch?, Never>?
            if current.isFull(config) {
                let (store, config, device, now, makeID) = (store, config, device, clock.now(), makeID)
                var exclude: Set<UUID> = [current.batch.id]
                if let acknowledging { exclude.insert(acknowledging.batch) }
                prefetch = Task {
                    try? await Self.prepare(store: store, excluding: exclude, config: config, device: device, now: now, makeID: makeID)
                }
            }
            let accepted = await send(current, within: lease)
            let acknowledged = await settle(&acknowledging)
            let prepared = await prefetch?.value
            guard acknowledged else {
                if accepted { await scheduleRetry("could not record an accepted upload") }  // else send() already decided
                return
            }
            guard accepted else { return }
            drainOutcome.uploadedLocations += current.batch.locations.count
            drainOutcome.uploadedGeofenceEvents += current.batch.events.count
            acknowledging = Acknowledgement(batch: current.batch.id, store: store, keepLocations: config.keepUploadedLocations)
            next = prepared
        }
        _ = await settle(&acknowledging)
    }

    /// Waits for the acknowledgement being committed, if any; false (logged) if it failed.
    private func settle(_ acknowledging: inout Acknowledgement?) async -> Bool {
        guard let pending = acknowledging else { return true }
        acknowledging = nil
        guard let error = await pending.commit.value else { return true }
        logger.error(
            "could not record an accepted upload; its batch goes again later (the server dedupes it)",
            metadata: ["batch": "\(pending.batch.wireString)", "error": "\(error)"])
        return false
    }

    /// The next batch (an open one first, else a new one from the queue) with its encoded body.
    private static func prepare(
        store: LocationStore, excluding: Set<UUID>, config: SyncConfig, device: WireDevice, now: Date,
        makeID: @escaping @Sendable () -> UUID
    ) async throws(BeekonError) -> PreparedBatch? {
        guard
            let batch = try await store.nextBatch(
                limit: config.effectiveBatchSize, now: now,
                excluding: excluding, makeID: makeID)
        else { return nil }
        return PreparedBatch(batch: batch, device: device, privacy: config.privacy)
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
