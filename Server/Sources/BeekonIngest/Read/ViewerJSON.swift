import BeekonWire
import Foundation

/// The JSON a viewer sees of every stored object that carries a position, rendered in one
/// place from typed values (issue 31): the read API (`/fixes`, `last_fix` in `/v1/devices`),
/// the live stream's `fix` and `geofence_event` events (rendered once at ingest and kept in the
/// event log), the `fix` of a locate request, and proximity events.
///
/// A coarsened share (XR-4) sees the same renderer's output for `Coarsening`'s typed copy: a
/// payload kept as text is read back into its typed value (``readFix(_:)``), coarsened, and
/// rendered again — numbers are never guessed from JSON text.
enum ViewerJSON {
    /// A stored fix: the schema-v1 location, then `install_id`, `session_id`, `batch_id` and `received_at`.
    static func write(_ f: StoredFix, into w: inout WireJSONWriter) { w.write(f) }

    /// ``write(_:into:)`` as text.
    static func fix(_ f: StoredFix) -> String {
        var w = WireJSONWriter(capacity: 420)
        write(f, into: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// A fix of `batch` as the read API will show it once stored.
    static func fix(_ l: WireLocation, of batch: IngestBatch) -> String {
        let e = batch.envelope
        return fix(
            StoredFix(location: l, sessionId: e.sessionId, installId: e.device.installId, batchId: e.batchId, receivedAt: batch.receivedAt))
    }

    /// A geofence event of `batch`: the schema-v1 object, then `install_id`, `session_id`, `batch_id` and `received_at`.
    static func geofenceEvent(_ g: WireGeofenceEvent, of batch: IngestBatch) -> String {
        let e = batch.envelope
        let event = WireViewerGeofenceEvent(
            event: g, installId: e.device.installId, sessionId: e.sessionId, batchId: e.batchId, receivedAt: batch.receivedAt)
        return String(decoding: event.encoded(), as: UTF8.self)
    }

    /// A stored proximity event: the schema-v1 object, then `session_id`, `batch_id` and `received_at`.
    static func write(_ s: StoredProximityEvent, into w: inout WireJSONWriter) {
        w.write(s.event) { w in
            w.member("session_id", string: s.sessionId.wireString)
            w.member("batch_id", string: s.batchId.wireString)
            w.member("received_at", string: s.receivedAt.description)
        }
    }

    /// Reads back a fix object ``write(_:into:)`` rendered (nil when `json` is not one), with
    /// BeekonWire's own reader.
    static func readFix(_ json: String) -> StoredFix? {
        try? WireViewerFix.decode(Data(json.utf8))
    }
}
