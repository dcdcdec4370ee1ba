import Beekon
import BeekonTesting
import BeekonTestSupport
import Foundation

/// Feeds `fixes` and waits until `count` positions were stored (emitted after the write).
func feed(_ beekon: Beekon, _ provider: ScriptedProvider, _ fixes: [RawFix], expecting count: Int) async {
    let positions = beekon.positions
    await provider.send(fixes)
    var seen = 0
    for await _ in positions {
        seen += 1
        if seen == count { return }
    }
}

/// An execution budget whose leases report the remaining time set by the test, and
/// which counts leases begun and ended.
final class ScriptedBudget: ExecutionBudget, @unchecked Sendable {
    private let lock = NSLock()
    private var remainingTime: Duration?
    private var begun = 0
    private var ended = 0

    init(_ remaining: Duration?) { remainingTime = remaining }

    /// What leases begun from now on report.
    func set(_ remaining: Duration?) { lock.withLock { remainingTime = remaining } }

    func beginLease(named name: String) async -> any ExecutionLease {
        let remaining: Duration? = lock.withLock {
            begun += 1
            return remainingTime
        }
        return Lease(remainingTime: remaining, budget: self)
    }

    var counts: (begun: Int, ended: Int) { lock.withLock { (begun, ended) } }
    fileprivate func didEnd() { lock.withLock { ended += 1 } }

    private struct Lease: ExecutionLease {
        let remainingTime: Duration?
        let budget: ScriptedBudget
        func remaining() async -> Duration? { remainingTime }
        func end() async { budget.didEnd() }
    }
}
