import BeekonGzip
import BeekonWire
import Foundation

/// A batch and its request body (the v1 envelope, gzipped), ready to send.
struct PreparedBatch: Sendable {
    let batch: PendingBatch
    let body: Data
    let gzipped: Bool

    init(batch: PendingBatch, device: WireDevice, privacy: PrivacyConfig? = nil) {
        self.batch = batch
        // Privacy (BY-4) applies here, as the batch is encoded: nothing more precise leaves the device.
        let filter = privacy.map(PrivacyFilter.init(config:))
        let locations = filter.map { f in batch.locations.compactMap { f.apply($0.wire) } } ?? batch.locations.map(\.wire)
        var envelope = WireEnvelope(
            batchId: batch.id, sessionId: batch.sessionId, sentAt: WireTimestamp(batch.createdAt), device: device,
            extras: batch.extras, locations: locations, geofenceEvents: batch.events.map(\.wire))
        envelope.proximityEvents = batch.proximity.map(\.wire)
        let json = WireJSONWriter.encode(envelope)
        if let compressed = Gzip.compress(json) {
            body = compressed
            gzipped = true
        } else {
            body = json  // zlib failed (out of memory): send identity rather than a wrong header.
            gzipped = false
        }
    }

    /// Whether the batch took all it could: more may be waiting, worth preparing while this one is in flight.
    func isFull(batchSize: Int) -> Bool {
        batch.locations.count >= batchSize || batch.events.count >= LocationStore.maxEventsPerBatch
    }
}
