#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
        import UIKit
    #elseif os(iOS)
        import UIKit
    #endif

    /// The process's CoreLocation sessions (iOS 17+: `CLBackgroundActivitySession`, iOS 18+:
    /// `CLServiceSession`), created and invalidated only as ``LocationSessionPlan`` says: at
    /// `start()` in the foreground or at the host's launch call, held across power-mode
    /// changes, pauses, probes and profile switches, ended at stop. One per process, so the
    /// launch call and the provider share them. macOS has neither session (both are
    /// `API_UNAVAILABLE(macos)` in the iOS 18 SDK headers).
    @MainActor
    final class LocationSessions {
        /// The process's sessions.
        static let shared = LocationSessions()

        private var held = LocationSessionPlan.Sessions.none
        private var background: AnyObject?
        private var service: AnyObject?

        /// Whether the app is in the foreground (`UIApplication.applicationState`); always on macOS.
        static var inForeground: Bool {
            #if os(iOS) || BEEKON_APPLE_SHIM
                return UIApplication.shared.applicationState != .background
            #else
                return true
            #endif
        }

        /// Creates and ends sessions as the plan says for `occasion` under `authorization`.
        func apply(_ occasion: LocationSessionPlan.Occasion, authorization: LocationAccess.Authorization) {
            let next = LocationSessionPlan(authorization: authorization).next(held: held, occasion: occasion)
            guard next != held else { return }
            #if os(iOS) || BEEKON_APPLE_SHIM
                if #available(iOS 17.0, *), next.backgroundActivity != held.backgroundActivity {
                    (background as? CLBackgroundActivitySession)?.invalidate()
                    background = next.backgroundActivity ? CLBackgroundActivitySession() : nil
                }
                if #available(iOS 18.0, *), next.service != held.service {
                    (service as? CLServiceSession)?.invalidate()
                    // Never more than the status already granted: no prompt (CLServiceSession.h).
                    service = next.service.map { CLServiceSession(authorization: $0.clValue) }
                }
            #endif
            held = next
        }
    }

    extension LocationSessionPlan.ServiceAuthorization {
        /// The `CLServiceSession.AuthorizationRequirement`.
        @available(iOS 18.0, *)
        @available(macOS, unavailable)
        var clValue: CLServiceSession.AuthorizationRequirement {
            switch self {
            case .none: return .none
            case .whenInUse: return .whenInUse
            case .always: return .always
            }
        }
    }

    /// iOS 17+/macOS 14+: `CLLocationUpdate.liveUpdates(_:)`. Only the updates: the sessions
    /// that keep them alive in the background are ``LocationSessions``', untouched here, so a
    /// pause or a mode change never recreates one. Each update becomes a `LocationAccess`
    /// snapshot and, when it has one, a `LocationSample`; the provider decides what they mean.
    @available(iOS 17.0, macOS 14.0, *)
    @MainActor
    final class LiveUpdatesSession {
        private var task: Task<Void, Never>?

        /// Starts live updates with `configuration`; `deliver` gets every update.
        func start(
            _ configuration: LocationPowerPlan.LiveConfiguration, base: LocationAccess,
            deliver: @escaping @Sendable (LocationAccess, LocationSample?) async -> Void
        ) {
            stop()
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

        /// Ends the updates (the sessions stay).
        func stop() {
            task?.cancel()
            task = nil
        }
    }

    /// iOS 17+/macOS 14+: the OS region slots as `CLMonitor` conditions (one monitor per
    /// process, named `BeekonFences`, every condition in it ours): the fence page, its refresh
    /// region and the stationary wake region. Opened once, after protected data is available
    /// (``MonitorOpening``).
    @available(iOS 17.0, macOS 14.0, *)
    actor ConditionPager {
        private var monitor: CLMonitor?
        private var opening = MonitorOpening()
        private var openTask: Task<CLMonitor, Never>?
        private var observing = false

        /// The conditions the monitor kept from an earlier process (CLMonitor persists them).
        func heldIdentifiers() async -> [String] {
            await open().identifiers
        }

        /// Applies a re-page.
        func apply(_ change: RegionChange) async {
            let monitor = await open()
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

        /// Places (or moves) the stationary wake region; the device is inside it.
        func placeWake(_ region: StationaryWakePlan.Region) async {
            let monitor = await open()
            await monitor.remove(StationaryWakePlan.identifier)
            await monitor.add(
                CLMonitor.CircularGeographicCondition(center: region.coordinate, radius: region.radiusMeters),
                identifier: StationaryWakePlan.identifier, assuming: .satisfied)
        }

        /// Removes these conditions.
        func remove(ids: [String]) async {
            guard let monitor else { return }
            for id in ids { await monitor.remove(id) }
        }

        /// Starts reading events (once): `left` with the identifier of the refresh or wake condition
        /// when it becomes unsatisfied, `refused` with the identifier of a condition over the limit
        /// (iOS 18 `conditionLimitExceeded`).
        func observe(left: @escaping @Sendable (String) async -> Void, refused: @escaping @Sendable (String) async -> Void) async {
            guard !observing else { return }
            observing = true  // before the suspension: a re-entrant call must not read the events twice
            let opened = await open()
            Task {
                do {
                    for try await event in await opened.events {
                        if #available(iOS 18.0, macOS 15.0, *), event.conditionLimitExceeded {
                            await refused(event.identifier)
                        } else if event.state == .unsatisfied,
                            event.identifier == RegionPager.refreshIdentifier || event.identifier == StationaryWakePlan.identifier
                        {
                            await left(event.identifier)
                        }
                    }
                } catch {}
            }
        }

        /// The one monitor: opened by the first caller once protected data is available; callers
        /// that arrive during the opening (the actor re-enters at its `await`) wait for it.
        private func open() async -> CLMonitor {
            while true {
                let available = await ProtectedData.isAvailable()
                switch opening.request(protectedDataAvailable: available) {
                case .use, .awaitOpening:
                    if let monitor { return monitor }
                    if let openTask { return await openTask.value }
                case .open:
                    let task = Task { await CLMonitor("BeekonFences") }
                    openTask = task
                    let opened = await task.value
                    monitor = opened
                    opening.opened()
                    return opened
                case .awaitProtectedData:
                    await ProtectedData.waitUntilAvailable()
                }
            }
        }
    }

    /// Whether the app's data-protected files can be read (`UIApplication.isProtectedDataAvailable`;
    /// always on macOS), and waiting for `protectedDataDidBecomeAvailableNotification`.
    enum ProtectedData {
        /// Whether protected data is available now.
        static func isAvailable() async -> Bool {
            #if os(iOS) || BEEKON_APPLE_SHIM
                return await MainActor.run { UIApplication.shared.isProtectedDataAvailable }
            #else
                return true
            #endif
        }

        /// Returns once protected data is available (at once when it is).
        @MainActor
        static func waitUntilAvailable() async {
            #if os(iOS) || BEEKON_APPLE_SHIM
                let (stream, sink) = AsyncStream.makeStream(of: Void.self)
                let center = NotificationCenter.default
                let token = center.addObserver(
                    forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: .main
                ) {
                    _ in sink.yield()
                }
                if UIApplication.shared.isProtectedDataAvailable { sink.yield() }
                for await _ in stream { break }
                center.removeObserver(token)
            #endif
        }
    }
#endif
