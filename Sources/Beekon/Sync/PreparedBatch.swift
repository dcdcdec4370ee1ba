import BeekonWire
import Foundation

/// A batch and its request body (the v1 envelope, gzipped), ready to send.
struct PreparedBatch: Sendable {
    let batch: PendingBatch
    let body: Data
    let gzipped: Bool

    init(batch: PendingBatch, device: WireDevice) {
        self.batch = batch
        let envelope = WireEnvelope(
            batchId: batch.id, sessionId: batch.sessionId, sentAt: WireTimestamp(batch.createdAt), device: device,
            extras: batch.extras, locations: batch.locations.map(\.wire), geofenceEvents: batch.events.map(\.wire))
        let json = WireJSONWriter.encode(envelope)
        if let compressed = try? Gzip.compress(json) {
            body = compressed
            gzipped = true
        } else {
            body = json  // zlib failed (out of memory): send identity rather than a wrong header.
            gzipped = false
        }
    }

    /// Whether the batch took all it could: more may be waiting, worth preparing while this one is in flight.
    func isFull(_ config: SyncConfig) -> Bool {
        batch.locations.count >= config.effectiveBatchSize || batch.events.count >= LocationStore.maxEventsPerBatch
    }
}
