import BeekonWire
import Foundation
import Logging

/// The Beekon SDK: tracks location through a gate, stores every admitted fix
/// durably on the device, and publishes state and positions as hot streams.
///
/// ```swift
/// let beekon = Beekon(dependencies: .init(databasePath: path, provider: provider))
/// try await beekon.configure(BeekonConfig(preset: .precision))
/// try await beekon.start()
/// for await location in beekon.positions { print(location.latitude, location.longitude) }
/// ```
public actor Beekon {
    /// The process-wide instance. On Apple platforms: the CoreLocation provider, the
    /// Keychain vault, the app's background-task budget, and auto-resume of a persisted
    /// session on first use (no restore call). On Linux there is no built-in location
    /// source: `start()` fails with `locationServicesDisabled` naming how to create an
    /// instance with a provider (`Beekon(dependencies:)` with gpsd, NMEA or replay).
    public static let shared = Beekon(dependencies: .platformDefault)

    let deps: BeekonDependencies
    /// The SDK's logger: the injected one, teed into the diagnostic log (BY-6).
    let logger: Logger
    /// The diagnostic ring buffer (BY-6).
    let diagnostics: DiagnosticLog
    /// The per-fix decision (`FixCore`): tracking lifecycle, gate and admission window,
    /// stationary detector and timing, app state and activity, geofence states.
    var core: FixCore
    /// The database once opened, and what its first use decided.
    var opening = Opening()
    /// The publishers behind the hot streams.
    let broadcasts = Broadcasts()
    /// The running location source and the tasks that feed and wake it.
    var source = SourceRun()
    var stats = TrackingStatistics()
    /// When the age prune last ran (clock time).
    var lastPrune: Date?
    var syncEngine: SyncEngine?
    /// Handles the sync engine's events (`SyncEvent`) until it shuts down.
    var syncEvents: Task<Void, Never>?
    /// Device-side guards for locate requests (see `Beekon+Locate`).
    var locateGuard = LocateGuard()
    /// Who gives a fresh enrollment code when the credentials die (see `Enrollment`).
    var reenrollmentHandler: (@Sendable () async -> String?)?
    /// The push token for the server (see `Beekon+Push`), until it has it.
    var pushRegistration: PushRegistration?
    /// Following the app's lifecycle (see `Beekon+Lifecycle`).
    var lifecycle = LifecycleRun()
    /// Claimed by the first stream subscription of an auto-resuming instance.
    nonisolated let firstSubscription = OnceFlag()

    /// The store, opened on first use, and the one-time work of that first use.
    struct Opening {
        var store: LocationStore?
        /// Whether the persisted configuration and geofences were loaded.
        var configLoaded = false
        /// Whether this process made its launch decision (auto-resume, see `Beekon+Launch`).
        var launchDecided = false
    }

    /// Creates an SDK instance over explicit dependencies (for the agent and for tests).
    /// Nothing is opened until the first call that needs the database.
    public init(dependencies: BeekonDependencies) {
        self.deps = dependencies
        let clock = dependencies.clock
        let diagnostics = DiagnosticLog(now: { clock.now() })
        self.diagnostics = diagnostics
        self.logger = Logger(label: dependencies.logger.label) { _ in
            DiagnosticLogHandler(wrapped: dependencies.logger.handler, log: diagnostics)
        }
        self.core = FixCore(classifier: dependencies.activityClassifier)
    }

    // MARK: - Streams

    /// Lifecycle state: hot, replay-1, any number of subscribers (LC-3).
    public nonisolated var state: AsyncStream<BeekonState> {
        touchOnFirstSubscription()
        return broadcasts.state.stream()
    }

    /// The current lifecycle state.
    public nonisolated var currentState: BeekonState { broadcasts.state.current ?? .idle }

    /// What the platform says is wrong with location delivery while tracking continues
    /// (e.g. iOS 18's `insufficientlyInUse`: the user must open the app): hot, replay-1,
    /// empty when all is well. Act on it; tracking does not stop by itself (LC-2, XR-1).
    public nonisolated var locationHealth: AsyncStream<LocationHealth> {
        touchOnFirstSubscription()
        return broadcasts.locationHealth.stream()
    }

    /// The latest ``LocationHealth``.
    public nonisolated var currentLocationHealth: LocationHealth { broadcasts.locationHealth.current ?? [] }

    /// Each admitted fix, emitted after it is durably stored: hot, replay-1 (FX-7).
    public nonisolated var positions: AsyncStream<Location> { broadcasts.positions.stream() }

    // MARK: - Configuration and lifecycle

    /// Applies a configuration at any time (LC-8): gate values apply from the next fix
    /// without restarting the source. The configuration is persisted for later launches.
    public func configure(_ config: BeekonConfig) async throws(BeekonError) {
        try config.validate()
        let store = try await ready()
        try await store.saveConfig(config)
        let effective = adoptBase(config)  // the current app state's profile applied (BY-4)
        await perform(core.machine.configure(effective))
        await applyStationary(effective)
        // A new configuration also re-arms uploads after a permanent or auth failure (SY-7).
        try await applySync()?.wake(.configure)
    }

    /// The configuration in effect (the last `configure`, persisted, else defaults), as passed:
    /// without the current profile applied.
    public func configuration() async throws(BeekonError) -> BeekonConfig {
        _ = try await ready()
        return core.pipeline.base
    }

    /// Starts a new session and returns once tracking (LC-4). Does nothing when already tracking.
    /// Throws `permissionDenied`, `locationServicesDisabled` or `storage` when it cannot proceed.
    public func start() async throws(BeekonError) {
        let store = try await ready()
        guard core.machine.session == nil else { return }
        await storePersistedHeld(store)
        try await begin(session: deps.makeID(), resumeFrom: nil)
        try await applySync()
    }

    /// Resumes the persisted session after the process died while tracking (LC-6): same
    /// session id, gate continuing from the last stored fix. Returns whether it resumed.
    @discardableResult
    public func resumeIfNeeded() async throws(BeekonError) -> Bool {
        let store = try await ready()
        guard core.machine.session == nil, let session = try await store.trackingIntent() else { return false }
        await storePersistedHeld(store)
        let last = try await store.lastLocation(session: session)
        logger.info("resuming session", metadata: ["session": "\(session.wireString)"])
        try await begin(
            session: session,
            resumeFrom: last.map {
                GatePoint(timestamp: $0.timestamp, latitude: $0.latitude, longitude: $0.longitude)
            })
        try await applySync()
        return true
    }

    /// Stops tracking (state `stopped(.user)`) and clears the tracking intent, so the
    /// next launch does not resume. Without a running session it only clears the intent.
    public func stop() async throws(BeekonError) {
        _ = try await ready()
        let wasTracking = core.machine.session != nil
        if wasTracking { logGateSummary() }  // gate decisions in aggregate, for the diagnostic log (BY-6)
        try await performThrowing(core.machine.stop(.user))  // closing the session wakes the upload (SY-3)
    }

    /// Stops because the process is being terminated by the OS or a service manager:
    /// state `stopped(.system)`, the intent is kept, so the next launch resumes the session.
    /// (Every other stop — user, permission, services — clears it: LC-5.)
    public func shutdown() async {
        guard opening.store != nil else { return }
        if core.machine.session != nil { logGateSummary() }
        await perform(core.machine.stop(.system))
        await syncEngine?.shutdown()
        syncEngine = nil
        await diagnostics.flush()
    }

    /// Returns once the location source has ended (the end of a replay) or failed,
    /// after every fix it delivered has been processed. Returns at once when not tracking.
    public func waitUntilSourceEnds() async {
        guard core.machine.session != nil, !source.ended else { return }
        await withCheckedContinuation { source.endWaiters.append($0) }
    }

    /// The running session's id, if tracking.
    public var sessionID: UUID? { core.machine.session }

    /// Counters of this process's tracking run(s).
    public var statistics: TrackingStatistics { stats }

    // MARK: - History

    /// Stored fixes with `from ≤ timestamp ≤ to`, in time order (ST-2). Works while not tracking.
    public func history(from: Date, to: Date) async throws(BeekonError) -> [Location] {
        try await ready().history(from: from, to: to)
    }

    /// Deletes stored fixes older than `date` and returns how many (ST-5).
    @discardableResult
    public func deleteLocations(before date: Date) async throws(BeekonError) -> Int {
        try await ready().deleteLocations(before: date)
    }

    /// The install id: a UUIDv7 created once per install and persisted (SY-10).
    public func installID() async throws(BeekonError) -> UUID {
        try await ready().installID(makeID: deps.makeID)
    }

    /// A snapshot of what the database holds.
    public func storeReport() async throws(BeekonError) -> StoreReport {
        try await ready().report()
    }

    /// Reads the status of a database another process may be writing (WAL readers
    /// never block the writer). Opens read-only; never migrates or writes.
    public static func inspect(databaseAt path: String) async throws(BeekonError) -> StoreReport {
        guard FileManager.default.fileExists(atPath: path) else {
            throw .storage("no database at \(path)")
        }
        let store = try LocationStore(path: path, logger: Logger(label: "beekon.inspect"), readOnly: true)
        return try await store.report()
    }

    // MARK: - Internals

    /// Opens the store on first use (a failure is retried on the next call) and loads
    /// the persisted configuration.
    func ready() async throws(BeekonError) -> LocationStore {
        let store: LocationStore
        if let opened = opening.store {
            store = opened
        } else {
            store = try LocationStore(path: deps.databasePath, rowCap: deps.rowCap, logger: logger)
            opening.store = store
            diagnostics.attach(store.pool)
            _ = try await store.installID(makeID: deps.makeID)
        }
        if !opening.configLoaded {
            if var saved = try await store.savedConfig() {
                saved = adoptBase(saved)
                core.restore(saved)
            }
            let (fences, inside) = try await store.loadGeofences()
            core.geofences = GeofenceEngine(fences: fences, insideIDs: inside)
            opening.configLoaded = true
            if !fences.isEmpty { await geofencesDidChange() }
        }
        observeAppLifecycle()
        await observeLocationHealth()
        if !opening.launchDecided { await decideLaunch(store: store) }
        return store
    }
}

/// Counters of fixes seen by this process, for progress lines and diagnostics.
public struct TrackingStatistics: Sendable, Equatable {
    /// Raw fixes delivered by the source.
    public var received = 0
    /// Fixes dropped for non-finite or out-of-range coordinates (FX-4).
    public var invalid = 0
    /// Fixes whose timestamp was not later than the last admitted one (FX-2).
    public var notLater = 0
    /// Fixes rejected by the time condition.
    public var tooSoon = 0
    /// Fixes rejected by the distance condition.
    public var tooClose = 0
    /// Fixes admitted and durably stored.
    public var stored = 0
    /// Admitted fixes the store could not write (ST-7).
    public var storeFailures = 0
    /// Rows trimmed by the row cap.
    public var trimmed = 0
    /// Timestamp of the last stored fix.
    public var lastStoredFix: Date?
    /// The last storage error, if any.
    public var lastError: BeekonError?
}
