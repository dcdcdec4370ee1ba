import Logging
import ServiceLifecycle

/// Keeps the overview tier current in the background: rebuilds stale buckets (those that
/// received fixes since their last rebuild) in small transactions, so an ingest only marks
/// its buckets and never waits for a rebuild. Reads stay exact meanwhile: a stale bucket is
/// answered from its raw fixes (see `OverviewPlan`). Several instances may run it at once.
struct OverviewMaintainer: Service {
    /// Buckets per transaction (at 1 Hz, 600 fixes each: a few milliseconds of writing).
    static let batch = 32
    let history: any HistoryStore
    /// The pause when nothing is stale.
    let idle: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let rebuilt = try await history.rebuildOverview(limit: Self.batch)
                    if rebuilt == Self.batch {
                        await Task.yield()
                        continue
                    }
                } catch {
                    logger.warning("overview rebuild failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: idle)
            }
        }
    }
}
