#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// iOS 17+/macOS 14+: `CLLocationUpdate.liveUpdates(_:)` held alive in the background by a
    /// `CLBackgroundActivitySession`, plus on iOS 18 a `CLServiceSession` (unavailable on macOS) asking for
    /// Always authorization (sessions do not survive a relaunch: the provider creates them at
    /// every start, within seconds of launch). Each update becomes a `LocationAccess` snapshot
    /// and, when it has one, a `LocationSample`; the provider decides what they mean.
    @available(iOS 17.0, macOS 14.0, *)
    @MainActor
    final class LiveUpdatesSession {
        #if os(iOS) || BEEKON_APPLE_SHIM
            // `API_UNAVAILABLE(macos)` (CLBackgroundActivitySession.h): iOS only.
            private var background: CLBackgroundActivitySession?
        #endif
        private var service: AnyObject?
        private var task: Task<Void, Never>?

        /// Starts live updates with `configuration`; `deliver` gets every update.
        func start(
            _ configuration: LocationPowerPlan.LiveConfiguration, base: LocationAccess,
            deliver: @escaping @Sendable (LocationAccess, LocationSample?) async -> Void
        ) {
            stop()
            #if os(iOS) || BEEKON_APPLE_SHIM
                background = CLBackgroundActivitySession()
                if #available(iOS 18.0, *) { service = CLServiceSession(authorization: .always) }  // iOS only
            #endif
            let updates = CLLocationUpdate.liveUpdates(configuration.clValue)
            task = Task {
                do {
                    for try await update in updates {
                        var access = base
                        #if os(iOS) || BEEKON_APPLE_SHIM
                            if #available(iOS 18.0, *) { access.read(update) }
                        #endif
                        await deliver(access, update.location?.beekonSample)
                    }
                } catch {
                    // The sequence ends only when cancelled (stop) or when CoreLocation tears it down;
                    // the significant-change monitor keeps the app relaunchable either way.
                }
            }
        }

        /// Ends the updates and both sessions.
        func stop() {
            task?.cancel()
            task = nil
            #if os(iOS) || BEEKON_APPLE_SHIM
                background?.invalidate()
                background = nil
                if #available(iOS 18.0, *) { (service as? CLServiceSession)?.invalidate() }
            #endif
            service = nil
        }
    }

    /// iOS 17+/macOS 14+: the OS region slots as `CLMonitor` conditions (one monitor per
    /// process, named `BeekonFences`).
    @available(iOS 17.0, macOS 14.0, *)
    actor ConditionPager {
        private var monitor: CLMonitor?
        private var events: Task<Void, Never>?

        /// Applies a re-page; `leftRefresh` runs when the refresh condition becomes unsatisfied.
        func apply(_ change: RegionChange, leftRefresh: @escaping @Sendable () async -> Void) async {
            let monitor = await open(leftRefresh: leftRefresh)
            for id in change.remove { await monitor.remove(id) }
            for fence in change.add {
                await monitor.add(
                    CLMonitor.CircularGeographicCondition(center: fence.coordinate, radius: fence.radiusMeters),
                    identifier: fence.id, assuming: .unsatisfied)
            }
            await monitor.remove(RegionPager.refreshIdentifier)
            await monitor.add(
                CLMonitor.CircularGeographicCondition(center: change.refresh.coordinate, radius: change.refresh.radiusMeters),
                identifier: RegionPager.refreshIdentifier, assuming: .satisfied)
        }

        /// Removes these conditions.
        func remove(ids: [String]) async {
            guard let monitor else { return }
            for id in ids { await monitor.remove(id) }
        }

        private func open(leftRefresh: @escaping @Sendable () async -> Void) async -> CLMonitor {
            if let monitor { return monitor }
            let opened = await CLMonitor("BeekonFences")
            monitor = opened
            events = Task {
                do {
                    for try await event in await opened.events
                    where event.identifier == RegionPager.refreshIdentifier && event.state == .unsatisfied {
                        await leftRefresh()
                    }
                } catch {}
            }
            return opened
        }
    }
#endif
