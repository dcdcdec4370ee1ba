import Foundation

/// When the SDK asks iOS for background time (BGAppRefresh), and what a granted refresh
/// does: record the stationary check-in that fell due while the app was suspended, then
/// upload (BY-4). iOS runs a refresh at its own discretion, never before `earliestBeginDate`;
/// the SDK asks again after every refresh and at every launch.
///
/// Suspended and stationary, the app has three wake sources (``wakeSources(paused:stationaryRadiusMeters:)``):
/// the significant-change monitor (relaunches a terminated app), the stationary wake region
/// around the stationary position (``StationaryWakePlan``: leaving it asks for a fix), and this refresh.
///
/// The identifier is the host's (`BeekonDependencies.backgroundRefreshIdentifier`): `BGTaskScheduler.h`
/// says "There can be a total of 1 refresh task and 10 processing tasks scheduled at any time",
/// so an app with a refresh task of its own may have the SDK use that identifier's slot under
/// a name it lists. A failed submit is reported (``submitFailure(code:)``), never swallowed.
package struct BackgroundRefreshPlan: Sendable, Hashable {
    /// The default task identifier; list the one in use under `BGTaskSchedulerPermittedIdentifiers`.
    package static let defaultIdentifier = "dev.beekon.refresh"
    /// iOS does not honour app refreshes much more often than this.
    package static let minimumIntervalSeconds = 900.0

    /// The sync interval in effect (nil: sync off).
    package var syncIntervalSeconds: Double?
    /// The check-in interval declared (nil: no check-ins, `pause` or `keepTracking`).
    package var checkInIntervalSeconds: Double?
    /// The task identifier.
    package var identifier: String

    /// A plan for the configured intervals.
    package init(
        syncIntervalSeconds: Double?, checkInIntervalSeconds: Double? = nil, identifier: String = BackgroundRefreshPlan.defaultIdentifier
    ) {
        self.syncIntervalSeconds = syncIntervalSeconds
        self.checkInIntervalSeconds = checkInIntervalSeconds
        self.identifier = identifier
    }

    /// What wakes the suspended app while tracking.
    package enum WakeSource: Sendable, Hashable {
        /// The significant-location-change monitor (always on while tracking).
        case significantChanges
        /// The stationary wake region of this radius around the stationary position.
        case regionAroundStationaryPosition(radiusMeters: Double)
        /// The BGAppRefresh task, no earlier than this many seconds from now.
        case backgroundRefresh(earliestSeconds: Double)
    }

    /// The wake sources while the source is `paused` (stationary, with the detector's radius) or running.
    package func wakeSources(paused: Bool, stationaryRadiusMeters: Double) -> [WakeSource] {
        var sources: [WakeSource] = [.significantChanges]
        if paused {
            sources.append(
                .regionAroundStationaryPosition(radiusMeters: StationaryWakePlan.radius(stationaryRadiusMeters: stationaryRadiusMeters)))
        }
        if let interval = intervalSeconds { sources.append(.backgroundRefresh(earliestSeconds: interval)) }
        return sources
    }

    /// The refresh interval: the shorter of sync and check-in, at least ``minimumIntervalSeconds``.
    private var intervalSeconds: Double? {
        let intervals = [syncIntervalSeconds, checkInIntervalSeconds].compactMap { $0 }.filter(\.isFinite)
        return intervals.min().map { max(Self.minimumIntervalSeconds, $0) }
    }

    /// The `earliestBeginDate` of the next request, or nil when nothing should be scheduled.
    package func nextRequest(now: Date) -> Date? {
        intervalSeconds.map { now.addingTimeInterval($0) }
    }

    /// What a failed `BGTaskScheduler.submit(_:)` means, by its `BGTaskSchedulerErrorCode`
    /// (`BGTaskScheduler.h`), for the diagnostic log.
    package func submitFailure(code: Int) -> String {
        switch code {
        case 1:
            return "background refresh unavailable (BGTaskSchedulerErrorCodeUnavailable): Background App Refresh is off "
                + "for this app or the device (e.g. the simulator); check-ins wait for the next launch"
        case 2:
            return "background refresh not scheduled: too many pending refresh requests (the app may have one refresh "
                + "task in all); give the SDK another identifier or cancel the other request"
        case 3:
            return "background refresh not permitted: add \"\(identifier)\" to BGTaskSchedulerPermittedIdentifiers "
                + "and \"fetch\" to UIBackgroundModes in Info.plist"
        default:
            return "background refresh not scheduled (BGTaskScheduler error \(code))"
        }
    }
}
