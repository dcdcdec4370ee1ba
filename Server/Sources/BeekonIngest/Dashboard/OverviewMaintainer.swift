import Foundation
import Logging
import ServiceLifecycle

/// Keeps the overview tier current in the background: rebuilds stale buckets (those that
/// received fixes since their last rebuild) in small transactions, so an ingest only marks
/// its buckets and never waits for a rebuild. Reads stay exact meanwhile: a stale bucket is
/// answered from its raw fixes (see `OverviewPlan`). Several instances may run it at once.
///
/// A bucket is rebuilt once it has ended and `settle` has passed (late uploads of a device
/// that was offline mark it again, and it is rebuilt again): the bucket a device is filling
/// stays raw, ten minutes of fixes at most, instead of being simplified after every upload.
package struct OverviewMaintainer: Service {
    /// Buckets per transaction (at 1 Hz, 600 fixes each: a few milliseconds of writing).
    static let batch = 32
    let history: any HistoryStore
    /// The pause when nothing is stale.
    let idle: Duration
    /// How long after its end a bucket is left for uploads still in flight.
    var settle: Duration = .seconds(60)
    let now: @Sendable () -> Date
    let logger: Logger
    /// Opens once the store is migrated (nil: it is): the first rebuild ran before the
    /// migration and logged `no such table: track_overview_buckets` (issue 50).
    var ready: StoreReadiness? = nil

    /// The `settledBefore` bound of a rebuild at `now`: buckets that ended `settle` ago or earlier.
    package static func settledBefore(_ now: Date, settle: Duration) -> Int64 {
        Int64((now.timeIntervalSince1970 * 1000).rounded(.down)) - settle.components.seconds * 1000
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            while !Task.isCancelled {
                do {
                    let rebuilt = try await history.rebuildOverview(
                        limit: Self.batch, settledBefore: Self.settledBefore(now(), settle: settle))
                    if rebuilt == Self.batch {
                        await Task.yield()
                        continue
                    }
                } catch {
                    guard !Task.isCancelled else { return }  // stopped during the rebuild
                    logger.warning("overview rebuild failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: idle)
            }
        }
    }
}
