import Foundation

extension Beekon {
    /// Upload progress and outcomes: hot, replay-1 (SY-8).
    public nonisolated var syncStatus: AsyncStream<SyncStatus> { broadcasts.syncStatus.stream() }

    /// Each rotation of the live auth token set (AU-9), for mirroring into the app's own
    /// session store: hot, replay-1 (a new subscriber gets this process's latest rotation).
    /// The SDK never logs the tokens; `AuthChange`'s descriptions redact them.
    public nonisolated var authChanges: AsyncStream<AuthChange> { broadcasts.authChanges.stream() }

    /// The latest sync status.
    public nonisolated var currentSyncStatus: SyncStatus { broadcasts.syncStatus.current ?? .idle }

    /// Uploads now (SY-3) and returns what that drain did: fixes and events uploaded, what
    /// is still pending, why it stopped early and when the engine retries by itself.
    /// Throws `invalidConfiguration` when sync is not configured, `storage` when the
    /// pending rows cannot be counted.
    @discardableResult
    public func sync() async throws(BeekonError) -> SyncOutcome {
        let store = try await ready()
        guard let engine = try await applySync() else {
            throw .invalidConfiguration("sync is not configured: pass a SyncConfig to configure()")
        }
        var outcome = await engine.syncNow()
        await retryPushRegistration()
        outcome.pending = try await store.pendingCount()
        return outcome
    }

    /// Fixes and geofence events waiting for upload (SY-8).
    public func pendingUploadCount() async throws(BeekonError) -> Int {
        try await ready().pendingCount()
    }

    /// Sets the key/value pairs attached to every later batch (SY-9); persisted.
    /// At most 32 entries, keys of at most 64 characters (Unicode code points), values of at most
    /// 512 and 4,096 in all (`WireLimits`); more throws `invalidConfiguration` and keeps the old extras.
    public func setExtras(_ extras: [String: String]) async throws(BeekonError) {
        try await ready().setExtras(extras)
    }

    /// Fixes the server rejected with 400/422, set aside for inspection (SY-7).
    public func rejectedLocations() async throws(BeekonError) -> [Location] {
        try await ready().rejectedLocations()
    }

    /// Creates, replaces or removes the sync engine to match the configuration in effect.
    @discardableResult
    func applySync() async throws(BeekonError) -> SyncEngine? {
        let store = try await ready()
        let wanted = core.machine.config.sync
        if let engine = syncEngine, engine.config == wanted {
            await engine.declareCheckInInterval(core.machine.config.declaredCheckInIntervalSeconds)
            return engine
        }
        if let old = syncEngine {
            await old.shutdown()
            syncEngine = nil
        }
        guard let wanted else { return nil }
        let installID = try await store.installID(makeID: deps.makeID)
        let transport = deps.transport ?? URLSessionTransport()
        var refresher: TokenRefresher?
        if let auth = wanted.auth {
            // Dead credentials ask the host for a fresh code (re-enrolment), at the token endpoint the
            // refresh recipe names.
            var reenroll: TokenRefresher.Reenroll?
            if let url = auth.refreshUrl {
                reenroll = { [weak self] () async -> TokenSet? in
                    guard let self else { return nil }
                    return await self.reenroll(tokenURL: url)
                }
            }
            refresher = TokenRefresher(
                config: auth, transport: transport, clock: deps.authClock, secrets: deps.effectiveSecretStore,
                changes: broadcasts.authChanges, logger: logger, reenroll: reenroll)
            await refresher?.start()
        }
        let engine = SyncEngine(
            config: wanted, store: store, transport: transport, clock: deps.clock,
            makeID: deps.makeID, randomUnit: deps.randomUnit, status: broadcasts.syncStatus,
            logger: logger, installID: installID, auth: refresher, budget: deps.executionBudget)
        syncEngine = engine
        await engine.declareCheckInInterval(core.machine.config.declaredCheckInIntervalSeconds)
        // The engine's events are handled on one task per engine, outside its drain: a locate
        // request's answer itself syncs, which must not wait inside the drain that delivered it.
        // The task ends when the engine shuts down (its stream finishes).
        syncEvents = Task { [weak self, events = engine.events] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
        await engine.start()
        logger.info("sync on", metadata: ["url": "\(EndpointRule.redacted(wanted.url))", "batch": "\(wanted.effectiveBatchSize)"])
        return engine
    }

    /// Acts on what the sync engine reported.
    private func handle(_ event: SyncEvent) async {
        switch event {
        case .locateRequested(let ids):
            for id in ids { await handleLocateRequest(id: id) }
        }
    }
}
