import Foundation

/// When the SDK asks iOS for background time (BGAppRefresh), and what a granted refresh
/// does: record the stationary check-in that fell due while the app was suspended, then
/// upload (BY-4). iOS runs a refresh at its own discretion, never before `earliestBeginDate`;
/// the SDK asks again after every refresh and at every launch.
///
/// Suspended and stationary, the app has three wake sources (``wakeSources(paused:)``): the
/// significant-change monitor (relaunches a terminated app), the refresh region re-centred on
/// the stationary position (leaving it wakes the app: `RegionPaging.recentre`), and this refresh.
package struct BackgroundRefreshPlan: Sendable, Hashable {
    /// The task identifier; list it under `BGTaskSchedulerPermittedIdentifiers` in Info.plist.
    package static let identifier = "dev.beekon.refresh"
    /// iOS does not honour app refreshes much more often than this.
    package static let minimumIntervalSeconds = 900.0

    /// The sync interval in effect (nil: sync off).
    package var syncIntervalSeconds: Double?
    /// The check-in interval declared (nil: no check-ins, `pause` or `keepTracking`).
    package var checkInIntervalSeconds: Double?

    /// A plan for the configured intervals.
    package init(syncIntervalSeconds: Double?, checkInIntervalSeconds: Double? = nil) {
        self.syncIntervalSeconds = syncIntervalSeconds
        self.checkInIntervalSeconds = checkInIntervalSeconds
    }

    /// What wakes the suspended app while tracking.
    package enum WakeSource: Sendable, Hashable {
        /// The significant-location-change monitor (always on while tracking).
        case significantChanges
        /// The OS region around the stationary position (the re-centred refresh region).
        case regionAroundStationaryPosition
        /// The BGAppRefresh task, no earlier than this many seconds from now.
        case backgroundRefresh(earliestSeconds: Double)
    }

    /// The wake sources while the source is `paused` (stationary) or running.
    package func wakeSources(paused: Bool) -> [WakeSource] {
        var sources: [WakeSource] = [.significantChanges]
        if paused { sources.append(.regionAroundStationaryPosition) }
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
}
