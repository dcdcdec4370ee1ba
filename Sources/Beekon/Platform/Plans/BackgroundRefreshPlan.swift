import Foundation

/// When the interval upload trigger asks iOS for background time (BGAppRefresh), and
/// what a granted refresh does. iOS runs a refresh at its own discretion, never before
/// `earliestBeginDate`; the SDK asks again after every refresh and at every launch.
package struct BackgroundRefreshPlan: Sendable, Hashable {
    /// The task identifier; list it under `BGTaskSchedulerPermittedIdentifiers` in Info.plist.
    package static let identifier = "dev.beekon.refresh"
    /// iOS does not honour app refreshes much more often than this.
    package static let minimumIntervalSeconds = 900.0

    /// The sync interval in effect (nil: sync off, nothing to schedule).
    package var syncIntervalSeconds: Double?

    /// A plan for the configured sync interval.
    package init(syncIntervalSeconds: Double?) {
        self.syncIntervalSeconds = syncIntervalSeconds
    }

    /// The `earliestBeginDate` of the next request, or nil when nothing should be scheduled.
    package func nextRequest(now: Date) -> Date? {
        guard let interval = syncIntervalSeconds, interval.isFinite else { return nil }
        return now.addingTimeInterval(max(Self.minimumIntervalSeconds, interval))
    }
}
