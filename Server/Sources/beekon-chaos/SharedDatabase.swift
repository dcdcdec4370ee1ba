import Foundation
import PostgresTestCluster

/// What parallel trials share: the one PostgreSQL cluster (restarted at random by one trial
/// at a time) with the windows in which it was down, and whether disk-full faults are on.
final class SharedDatabase: @unchecked Sendable {
    /// The cluster, in `--store postgres` runs.
    let cluster: PostgresCluster?
    private let lock = NSLock()
    private var restarting = false
    private var outages: [ClosedRange<ContinuousClock.Instant>] = []
    private var outageStart: ContinuousClock.Instant?
    private var diskFull: Bool

    init(cluster: PostgresCluster?, diskFull: Bool) {
        self.cluster = cluster
        self.diskFull = diskFull
    }

    /// Whether disk-full faults are still on (off for good once a tmpfs could not be mounted).
    var diskFullOn: Bool {
        get { lock.withLock { diskFull } }
        set { lock.withLock { diskFull = newValue } }
    }

    /// Restarts the cluster unless another trial is restarting it; false when skipped.
    /// Blocks for the restart (run it off the cooperative pool).
    func restart() throws -> Bool {
        guard let cluster,
            lock.withLock({ () -> Bool in
                guard !restarting else { return false }
                restarting = true
                outageStart = .now
                return true
            })
        else { return false }
        defer {
            lock.withLock {
                // A second of grace: the server's pool reconnects after the restart.
                outages.append(outageStart!...(.now + .seconds(1)))
                outageStart = nil
                restarting = false
            }
        }
        try cluster.restart()
        return true
    }

    /// Whether the database was up during all of `window` (an exchange with the server).
    func wasUp(during window: ClosedRange<ContinuousClock.Instant>) -> Bool {
        lock.withLock {
            if let start = outageStart, window.upperBound >= start { return false }
            return !outages.contains { $0.overlaps(window) }
        }
    }
}
