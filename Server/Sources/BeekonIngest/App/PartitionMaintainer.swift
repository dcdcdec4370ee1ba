import Foundation
import Logging
import ServiceLifecycle

/// Keeps the weekly partitions of PostgreSQL's `locations` ahead of the clock and applies the
/// fix retention (issue 32; see `PostgresLocationStore.maintainPartitions`): once before the
/// server accepts connections (``runOnce()``) and then every hour. A failed run is logged and
/// retried an hour later; meanwhile no insert fails (the default partition takes any fix).
struct PartitionMaintainer: Service {
    let store: PostgresLocationStore
    let retentionDays: Int?
    let now: @Sendable () -> Date
    let logger: Logger
    /// Waits between runs (injected: tests never wait an hour).
    var sleep: Sleeper = realSleep
    /// Time between runs.
    static let interval: Duration = .seconds(3_600)

    /// One maintenance run; failures are logged, not thrown.
    func runOnce() async {
        do {
            let report = try await store.maintainPartitions(now: now(), retentionDays: retentionDays)
            if !report.created.isEmpty || !report.dropped.isEmpty {
                logger.info(
                    "location partitions",
                    metadata: [
                        "created": "\(report.created)", "dropped": "\(report.dropped)", "kept_newest": "\(report.keptNewest)",
                    ])
            }
        } catch {
            logger.warning("location partition maintenance failed", metadata: ["error": "\(error)"])
        }
    }

    func run() async throws {
        await Periodic(interval: Self.interval, sleep: sleep).run { await runOnce() }
    }
}
