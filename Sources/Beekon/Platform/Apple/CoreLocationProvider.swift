#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The CoreLocation source behind `LocationProvider` (SRC-5, BY-10), what `Beekon.shared`
    /// uses on Apple platforms:
    /// - the service ``LocationPowerPlan`` chooses for the power mode and the SDK's ``SourceTuning``:
    ///   on iOS 17+/macOS 14+ `CLLocationUpdate.liveUpdates(_:)` where every fix is wanted, kept
    ///   alive on iOS by a `CLBackgroundActivitySession` (and a `CLServiceSession` on iOS 18) held as
    ///   ``LocationSessionPlan`` says (`LocationSessions`); the standard `CLLocationManager` service
    ///   where a distance filter or automatic pauses serve the profile (and always before iOS 17);
    /// - while paused, the stationary wake region (``StationaryWakePlan``): leaving it asks for a fix;
    /// - on every version the significant-location-change monitor, which relaunches a
    ///   terminated app (the SDK then resumes the session by itself);
    /// - OS region slots paged with the nearest geofences (``RegionPaging``), `CLMonitor` on 17+.
    ///
    /// It never asks for authorization: the host app does (When In Use, then Always). Access
    /// it sees is judged by ``LocationAccess/decision``: a stop ends the stream with
    /// `LocationProviderError.permissionDenied` or `.servicesDisabled`; the rest is reported as
    /// ``LocationHealth``. On iOS it refuses to start without `location` in `UIBackgroundModes`
    /// (``BackgroundModes``) instead of trapping.
    public actor CoreLocationProvider: LocationProvider, GeofenceRegionObserver {
        private var bridgeTask: Task<LocationManagerBridge, Never>?
        private var bridge: LocationManagerBridge?
        private var liveTask: Task<any Sendable, Never>?
        private var conditions: AnyObject?
        /// Whether the OS-held regions were reconciled with the paging (once per process).
        private var regionsAdopted = false
        private let health = AsyncStream.makeStream(of: LocationHealth.self, bufferingPolicy: .bufferingNewest(8))
        private var continuation: AsyncThrowingStream<RawFix, any Error>.Continuation?
        private var eventsTask: Task<Void, Never>?
        private var paging = RegionPaging()
        private var baseAccess = LocationAccess()
        private var running = false
        /// The power mode applied last, and the SDK's tuning (distance filter, stationary position).
        private var mode = PowerMode.paused
        private var tuning = SourceTuning()
        /// The stationary wake region (kept apart from the fence paging's refresh region).
        private var wake = StationaryWakePlan()
        /// One-shot requests waiting for a fresh fix (``OneShotFixRule``), with the mode each asked for.
        private var oneShots: [Int: (rule: OneShotFixRule, mode: PowerMode, continuation: CheckedContinuation<RawFix?, Never>)] = [:]
        private var nextOneShot = 0

        /// Creates the provider; CoreLocation is touched only when tracking starts.
        public init() {}

        /// Whether `UIBackgroundModes` lists `location` (``BackgroundModes``); always on macOS,
        /// where `allowsBackgroundLocationUpdates` is not set.
        private nonisolated var backgroundLocationDeclared: Bool {
            #if os(iOS) || BEEKON_APPLE_SHIM
                return BackgroundModes(infoValue: Bundle.main.object(forInfoDictionaryKey: "UIBackgroundModes")).allowsBackgroundLocation
            #else
                return true
            #endif
        }

        /// Whether `CLLocationUpdate.liveUpdates(_:)` exists here.
        private nonisolated var liveUpdatesAvailable: Bool {
            if #available(iOS 17.0, macOS 14.0, *) { return true }
            return false
        }
        /// Starts continuous updates for `mode` and the significant-change monitor; throws
        /// `permissionDenied` / `servicesDisabled` when access already forbids tracking.
        public func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
            #if os(iOS) || BEEKON_APPLE_SHIM
                let modes = BackgroundModes(infoValue: Bundle.main.object(forInfoDictionaryKey: "UIBackgroundModes"))
                if let refusal = modes.startRefusal { throw refusal }
            #endif
            let bridge = await managerBridge()
            let access = await bridge.access
            if case .stop(let reason) = access.decision { throw LocationAccess.providerError(for: reason) }
            health.continuation.yield(access.health)
            await MainActor.run {
                LocationSessions.shared.apply(
                    .start(foreground: LocationSessions.inForeground), authorization: access.authorization)
            }
            finish(throwing: nil)
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: RawFix.self)
            self.continuation = continuation
            baseAccess = access
            running = true
            await bridge.startSignificantChanges()
            await apply(mode)
            return stream
        }

        /// Switches the continuous updates to `mode` (`.paused` stops them and places the stationary
        /// wake region; the significant-change monitor stays, and so do the sessions: LocationSessionPlan).
        public func setPowerMode(_ mode: PowerMode) async {
            guard running else { return }
            await apply(mode)
        }

        /// The SDK's tuning: re-applies the mode when it changes what CoreLocation is asked for.
        package func tuningChanged(_ tuning: SourceTuning) async {
            let old = plan(for: mode)
            guard tuning != self.tuning else { return }
            self.tuning = tuning
            guard running else { return }
            if plan(for: mode) != old {
                await apply(mode)
            } else if mode == .paused, let stationary = tuning.stationary {
                await performWake(wake.paused(at: stationary))
            }
        }

        /// Stops every update and region, and finishes the stream.
        public func stop() async {
            running = false
            await apply(.paused)
            await bridge?.stopSignificantChanges()
            await removeRegions(paging.reset())
            await MainActor.run { LocationSessions.shared.apply(.stop, authorization: .notDetermined) }
            health.continuation.yield([])
            finish(throwing: nil)
        }

        /// The host's launch call, on the main thread, with a session being resumed: retakes the
        /// background activity and service sessions at once (``LocationSessionPlan/Occasion/launch``),
        /// before `didFinishLaunching` returns.
        public nonisolated func retakeSessionsAtLaunch() {
            let retake = {
                MainActor.assumeIsolated {
                    let authorization = LocationAccess(manager: CLLocationManager()).authorization
                    LocationSessions.shared.apply(.launch, authorization: authorization)
                }
            }
            if Thread.isMainThread { retake() } else { DispatchQueue.main.sync(execute: retake) }
        }

        /// ``LocationHealth`` from every access snapshot, while tracking.
        public func healthChanges() async -> AsyncStream<LocationHealth>? { health.stream }

        /// One fresh fix for locate on demand (BY-2): `requestLocation()`, answered by the first
        /// fix no older than ``OneShotFixRule`` allows; nil after `timeout`. Tracking is not
        /// touched (paused stays paused).
        public func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
            let bridge = await managerBridge()
            if case .stop(let reason) = await bridge.access.decision { throw LocationAccess.providerError(for: reason) }
            nextOneShot += 1
            let id = nextOneShot
            let rule = OneShotFixRule(requestedAt: Date())
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.answerOneShot(id, with: nil)
            }
            defer { timer.cancel() }
            return await withCheckedContinuation { continuation in
                oneShots[id] = (rule, mode, continuation)
                // The request runs at the accuracy it asked for, not the paused plan's 3 km (LocationPowerPlan).
                let accuracy = plan(for: self.mode).desiredAccuracy(oneShot: oneShotMode)
                Task { @MainActor in
                    bridge.setDesiredAccuracy(accuracy)
                    bridge.requestOneLocation()
                }
            }
        }

        private func answerOneShot(_ id: Int, with fix: RawFix?) {
            guard let answered = oneShots.removeValue(forKey: id) else { return }
            answered.continuation.resume(returning: fix)
            guard oneShots.isEmpty, let bridge else { return }
            let accuracy = plan(for: mode).desiredAccuracy
            Task { @MainActor in bridge.setDesiredAccuracy(accuracy) }
        }

        /// The finest mode an outstanding one-shot request asked for.
        private var oneShotMode: PowerMode? {
            let modes = oneShots.values.map(\.mode)
            return modes.min { LocationPowerPlan(mode: $0).desiredAccuracy < LocationPowerPlan(mode: $1).desiredAccuracy }
        }

        /// Re-pages the OS region slots for a new fence set.
        package func geofencesChanged(_ fences: [Geofence]) async {
            await adoptHeldRegions(fences: fences)
            if let change = paging.replace(fences: fences) { await applyRegions(change) }
        }

        // MARK: - Events

        /// The one bridge. The task is stored before the first suspension, so concurrent first
        /// uses (start and a locate request) share one manager instead of orphaning one.
        private func managerBridge() async -> LocationManagerBridge {
            if let bridge { return bridge }
            if let bridgeTask { return await bridgeTask.value }
            let task = Task { await MainActor.run { LocationManagerBridge() } }
            bridgeTask = task
            let made = await task.value
            if bridge == nil {
                bridge = made
                eventsTask = Task { [weak self] in
                    for await event in made.events { await self?.handle(event) }
                }
            }
            return made
        }

        private func handle(_ event: LocationManagerBridge.Event) async {
            switch event {
            case .samples(let samples): await receive(samples)
            case .access(let access):
                baseAccess = access
                judge(access)
                if running {
                    health.continuation.yield(access.health)
                    await MainActor.run {
                        LocationSessions.shared.apply(
                            .authorizationChange(foreground: LocationSessions.inForeground), authorization: access.authorization)
                    }
                }
            case .denied:
                var access = baseAccess
                access.authorizationDenied = true
                judge(access)
            case .leftRefreshRegion: await leftRefreshRegion()
            case .leftWakeRegion: await leftWakeRegion()
            case .updatesPaused:
                guard running, let fix = await bridge?.lastSample?.rawFix else { return }
                await performWake(
                    wake.osPaused(latitude: fix.latitude, longitude: fix.longitude, radiusMeters: tuning.stationaryRadiusMeters))
            case .monitoringFailed(let id): await regionRefused(id)
            }
        }

        private func deliver(_ access: LocationAccess, _ sample: LocationSample?) async {
            if running { health.continuation.yield(access.health) }
            judge(access)
            if let sample { await receive([sample]) }
        }

        /// Ends the stream when access no longer allows tracking (LC-2).
        private func judge(_ access: LocationAccess) {
            guard running, case .stop(let reason) = access.decision else { return }
            finish(throwing: LocationAccess.providerError(for: reason))
        }

        private func receive(_ samples: [LocationSample]) async {
            for (id, waiting) in oneShots {
                if let fix = waiting.rule.answer(from: samples) { answerOneShot(id, with: fix) }
            }
            guard running else { return }
            let fixes = samples.compactMap(\.rawFix)
            for fix in fixes { continuation?.yield(fix) }
            guard let last = fixes.last else { return }
            await performWake(wake.fix(latitude: last.latitude, longitude: last.longitude))
            await adoptHeldRegions(fences: [])
            if let change = paging.observe(latitude: last.latitude, longitude: last.longitude) { await applyRegions(change) }
        }

        private func leftRefreshRegion() async {
            guard running, let sample = await bridge?.lastSample, let fix = sample.rawFix else { return }
            if let change = paging.observe(latitude: fix.latitude, longitude: fix.longitude) { await applyRegions(change) }
        }

        /// The OS refused a region (monitoring failure or condition limit): one slot fewer.
        private func regionRefused(_ id: String) async {
            guard running, id != StationaryWakePlan.identifier, paging.isOurs(id), let change = paging.refused(id) else { return }
            await applyRegions(change)
        }

        /// Launch reconciliation, once, before the first re-page: regions and conditions kept
        /// from an earlier process become orphans the first page removes unless it keeps them,
        /// and regions that are not ours (beacon regions, the host's own) shrink our share of
        /// the 20 slots (``RegionPaging/adopt(held:isOurs:)``).
        private func adoptHeldRegions(fences: [Geofence]) async {
            guard !regionsAdopted else { return }
            regionsAdopted = true
            let osRegions = await managerBridge().monitoredIdentifiers
            let known = Set(fences.map(\.id))
            let paging = self.paging
            let ours: @Sendable (String) -> Bool = { known.contains($0) || paging.isOurs($0) }
            if #available(iOS 17.0, macOS 14.0, *) {
                let conditions = await conditionPager().heldIdentifiers()
                self.paging.adopt(held: conditions + osRegions.filter { !ours($0) }, isOurs: { conditions.contains($0) })
            } else {
                self.paging.adopt(held: osRegions, isOurs: ours)
            }
            // A wake region an earlier process left (it has its own slot): gone unless placed since.
            if wake.region == nil { await removeRegions([StationaryWakePlan.identifier]) }
        }

        private func finish(throwing error: (any Error)?) {
            continuation?.finish(throwing: error)
            continuation = nil
        }

        // MARK: - CoreLocation

        /// The plan for `mode` under the current tuning and the bundle's background modes.
        private func plan(for mode: PowerMode) -> LocationPowerPlan {
            LocationPowerPlan(mode: mode, tuning: tuning, backgroundLocationDeclared: backgroundLocationDeclared)
        }

        /// Runs the service the plan chooses (live updates or the standard service), keeps an
        /// outstanding one-shot request alive across the change, and places or removes the
        /// stationary wake region.
        private func apply(_ mode: PowerMode) async {
            self.mode = mode
            let plan = plan(for: mode)
            let service = running ? plan.service(liveUpdatesAvailable: liveUpdatesAvailable) : .none
            if #available(iOS 17.0, macOS 14.0, *) {
                let session = await liveSession()
                if case .liveUpdates(let configuration) = service {
                    await session.start(configuration, base: baseAccess) { [weak self] access, sample in
                        await self?.deliver(access, sample)
                    }
                } else {
                    await session.stop()
                }
            }
            let bridge = await managerBridge()
            let accuracy = plan.desiredAccuracy(oneShot: oneShotMode)
            let reissue = plan.reissuesOneShot(pending: !oneShots.isEmpty, liveUpdatesAvailable: liveUpdatesAvailable)
            await bridge.configure(plan, accuracy: accuracy)
            if service == .standard { await bridge.startUpdates() } else { await bridge.stopUpdates() }
            if reissue { await bridge.requestOneLocation() }
            if mode == .paused, running, let stationary = tuning.stationary {
                await performWake(wake.paused(at: stationary))
            } else {
                await performWake(wake.resumed())
            }
        }

        /// Carries out the wake region's actions.
        private func performWake(_ actions: [StationaryWakePlan.Action]) async {
            for action in actions {
                switch action {
                case .place(let region):
                    if #available(iOS 17.0, macOS 14.0, *) {
                        await observeConditions()
                        await conditionPager().placeWake(region)
                    } else {
                        await managerBridge().placeWake(region)
                    }
                case .remove: await removeRegions([StationaryWakePlan.identifier])
                case .requestFix: await managerBridge().requestOneLocation()
                case .restartUpdates: await managerBridge().startUpdates()
                }
            }
        }

        /// The one live-updates object, memoised like the bridge (no orphan under concurrent first use).
        @available(iOS 17.0, macOS 14.0, *)
        private func liveSession() async -> LiveUpdatesSession {
            let task = liveTask ?? Task<any Sendable, Never> { await MainActor.run { LiveUpdatesSession() } }
            liveTask = task
            return await task.value as! LiveUpdatesSession  // the only value the task makes
        }

        private func applyRegions(_ change: RegionChange) async {
            if #available(iOS 17.0, macOS 14.0, *) {
                await observeConditions()
                await conditionPager().apply(change)
            } else {
                await bridge?.apply(change)
            }
        }

        /// Starts reading the monitor's events (once).
        @available(iOS 17.0, macOS 14.0, *)
        private func observeConditions() async {
            await conditionPager().observe(
                left: { [weak self] id in
                    if id == StationaryWakePlan.identifier { await self?.leftWakeRegion() } else { await self?.leftRefreshRegion() }
                },
                refused: { [weak self] id in await self?.regionRefused(id) })
        }

        private func leftWakeRegion() async {
            await performWake(wake.exited())
        }

        private func removeRegions(_ ids: [String]) async {
            guard !ids.isEmpty else { return }
            if #available(iOS 17.0, macOS 14.0, *) {
                await conditionPager().remove(ids: ids)
            } else {
                await bridge?.stopMonitoring(ids: ids)
            }
        }

        @available(iOS 17.0, macOS 14.0, *)
        private func conditionPager() -> ConditionPager {
            if let pager = conditions as? ConditionPager { return pager }
            let made = ConditionPager()
            conditions = made
            return made
        }
    }
#endif
