import BeekonWire
import Foundation

/// Uploads inside the host's execution budget (iOS background time, BY-10): a drain holds
/// a lease, and each request may run only for the lease's allowance (its remaining time
/// minus `ExecutionWindow`'s safety margin). When the allowance runs out first the request
/// is cancelled and nothing is recorded: the batch stays persisted with its membership and
/// `batch_id`, and the next drain (interval, BGAppRefresh, `sync()`, next launch) sends the
/// same bytes again. On Linux the budget is unlimited and requests run as before.
extension SyncEngine {
    /// One drain inside a lease named `beekon.upload`, ended when the drain ends.
    func drainWithinBudget() async {
        let lease = await budget.beginLease(named: "beekon.upload")
        await drain(within: lease)
        await lease.end()
    }

    /// One exchange bounded by the lease: nil when the allowance ran out first (the
    /// request was cancelled, or never started because no time was left).
    func exchange(
        _ prepared: PreparedBatch, authorization: String?,
        within lease: any ExecutionLease, willSend: @escaping @Sendable () -> Void = {}
    ) async -> Result<HTTPResponse, HTTPTransportError>? {
        guard let allowance = ExecutionWindow().allowance(remaining: await lease.remaining()) else {
            return await exchange(prepared, authorization: authorization, willSend: willSend)
        }
        guard allowance > .zero else { return nil }
        let clock = self.clock
        return await withTaskGroup(of: BudgetRace.self) { group in
            group.addTask { .answered(await self.exchange(prepared, authorization: authorization, willSend: willSend)) }
            group.addTask {
                do { try await clock.sleep(for: allowance) } catch { return .cancelled }
                return .expired
            }
            var outcome: Result<HTTPResponse, HTTPTransportError>?
            if let first = await group.next(), case .answered(let result) = first { outcome = result }
            group.cancelAll()
            return outcome
        }
    }

    /// The budget ran out mid-request: keep the batch (same id next time), report idle.
    func budgetExpired(_ batch: PendingBatch) async -> Bool {
        logger.warning(
            "upload cancelled: background time ran out; the batch stays queued under its id",
            metadata: ["batch": "\(batch.id.wireString)"])
        drainOutcome.failure = .transient("background time ran out; the batch stays queued under its id")
        await report(.idle)
        return false
    }
}

/// Which side of an exchange/budget race finished first.
enum BudgetRace: Sendable {
    case answered(Result<HTTPResponse, HTTPTransportError>)
    case expired
    case cancelled
}
