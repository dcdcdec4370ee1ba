import Foundation

/// One drain as a pipeline (SY-4..6): at most one batch on the wire; while it is there the
/// next one is assembled, persisted and encoded, and the accepted one before it is marked
/// uploaded — in the same transaction as that assembly when both start together, so a
/// drain writes once per batch. The SDK's own work overlaps the server's. A value without
/// I/O: `SyncEngine+Drain` runs the actions it returns and hands back what happened.
///
/// What it guarantees (`DrainPipelineTests`, `DrainOverlapTests`):
/// - one request at a time, in queue order: a batch goes out only after the server
///   accepted the one before it (whose mark may still be committing);
/// - a batch is marked uploaded once, and only after the server accepted it;
/// - after an exchange that did not succeed nothing more is sent; a batch prepared
///   meanwhile stays persisted under its id and goes out after the failed one, oldest
///   first, on the next drain;
/// - the drain ends only when nothing is on the wire, being prepared or being marked.
struct DrainPipeline: Sendable {
    /// What the engine does next. Actions returned together run concurrently.
    enum Action: Sendable {
        /// Mark `acknowledging` uploaded (if set), then assemble (persist) and encode the
        /// next batch leaving `excluding` and their rows out — one transaction.
        case prepare(excluding: Set<UUID>, acknowledging: UUID?)
        /// Send this batch; nothing else is on the wire.
        case send(PreparedBatch)
        /// Mark this accepted batch uploaded.
        case acknowledge(UUID)
        /// The drain is over and nothing is outstanding.
        case finish(End)
    }

    /// What happened to an action.
    enum Event: Sendable {
        /// The next batch (nil: nothing left to send), or why it could not be assembled.
        case prepared(Result<PreparedBatch?, BeekonError>)
        /// The exchange of this batch ended; `accepted` is false for any other outcome
        /// (the engine has already acted on it) and when the engine stopped before sending.
        case answered(UUID, accepted: Bool)
        /// The mark of this batch committed (nil) or failed (the batch stays open).
        case acknowledged(UUID, failure: BeekonError?)
    }

    /// How a drain ended.
    enum End: Sendable, Equatable {
        /// Nothing is left to send and every accepted batch is marked.
        case drained
        /// An exchange did not succeed (already acted on), or the engine stopped.
        case stopped
        /// An accepted batch could not be marked: it stays queued under its id and goes again.
        case acknowledgementFailed
        /// The next batch could not be assembled.
        case preparationFailed(String)
    }

    private let batchSize: Int
    private var onWire: UUID?
    private var preparing = false
    private var ready: PreparedBatch?
    private var marking: Set<UUID> = []
    private var exhausted = false
    private var end: End?
    private var finished = false

    /// A pipeline that prepares ahead only behind full batches of `batchSize` fixes (a
    /// shorter batch means the queue held no more when it was assembled).
    init(batchSize: Int) { self.batchSize = batchSize }

    /// The first action: prepare the oldest batch (an open one first).
    mutating func start() -> [Action] {
        preparing = true
        return [.prepare(excluding: [], acknowledging: nil)]
    }

    /// Takes what happened and returns what to do next.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .prepared(.success(let batch)):
            preparing = false
            guard let batch else {
                exhausted = true
                return settle()
            }
            guard end == nil else { return settle() }  // it stays persisted and goes next time
            guard onWire == nil else {
                ready = batch
                return []
            }
            return launch(batch, marking: nil)
        case .prepared(.failure(let error)):
            preparing = false
            if end == nil { end = .preparationFailed("\(error)") }
            return settle()
        case .answered(let id, let accepted):
            onWire = nil
            guard accepted else {
                // The exchange's own outcome (retry, hold, report) wins over a failed mark.
                end = .stopped
                ready = nil
                return settle()
            }
            marking.insert(id)
            if end == nil, let next = ready {
                ready = nil
                return launch(next, marking: id)
            }
            if end == nil, !preparing, !exhausted {
                preparing = true
                return [.prepare(excluding: marking, acknowledging: id)]
            }
            return [.acknowledge(id)]
        case .acknowledged(let id, let failure):
            marking.remove(id)
            if failure != nil, end == nil { end = .acknowledgementFailed }
            return settle()
        }
    }

    /// Puts `batch` on the wire and, behind a full batch, prepares the next one meanwhile,
    /// marking `accepted` (the batch before it) in the same transaction.
    private mutating func launch(_ batch: PreparedBatch, marking accepted: UUID?) -> [Action] {
        onWire = batch.batch.id
        guard !preparing, batch.isFull(batchSize: batchSize) else {
            return [.send(batch)] + (accepted.map { [Action.acknowledge($0)] } ?? [])
        }
        preparing = true
        return [.send(batch), .prepare(excluding: marking.union([batch.batch.id]), acknowledging: accepted)]
    }

    /// `finish` once nothing is outstanding and the drain is over (failed, or nothing left).
    private mutating func settle() -> [Action] {
        let over: End? = end ?? (exhausted ? .drained : nil)
        guard !finished, onWire == nil, !preparing, marking.isEmpty, let over else { return [] }
        finished = true
        return [.finish(over)]
    }
}
