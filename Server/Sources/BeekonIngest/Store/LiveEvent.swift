import BeekonWire
import Foundation

/// One entry of the event log: what `GET /v1/live` sends, in commit order.
///
/// `seq` is assigned by the store when the ingest transaction commits (SQLite: the
/// `events` rowid in the ingest transaction; PostgreSQL: a sequence, allocated under
/// a transaction-scoped lock so that values become visible in order — see the README).
package struct LiveEvent: Sendable, Equatable {
    /// The kinds of events on the stream (the SSE `event:` field).
    package enum Kind: String, Sendable, CaseIterable {
        /// A fix was stored.
        case fix
        /// A geofence event was stored.
        case geofenceEvent = "geofence_event"
        /// A device's reporting state changed.
        case device
        /// A locate request was created or moved in its lifecycle.
        case locate
    }

    /// Server-assigned, strictly increasing in commit order (the SSE `id:`).
    package var seq: Int64
    /// What happened.
    package var kind: Kind
    /// The device concerned.
    package var installId: UUID
    /// Fix / event time in Unix ms (the time a share's history window applies to).
    package var millis: Int64
    /// The event's JSON object (the SSE `data:`), as a read API answer would render it.
    package var payload: String

    /// Creates an event.
    package init(seq: Int64, kind: Kind, installId: UUID, millis: Int64, payload: String) {
        self.seq = seq
        self.kind = kind
        self.installId = installId
        self.millis = millis
        self.payload = payload
    }

    /// The SSE frame (`id`, `event`, `data`, blank line) with `data` as given; `id` in place of
    /// the sequence (a share's opaque id, ``LiveEventIDs``).
    func frame(data: String, id: String? = nil) -> String {
        "id: \(id ?? String(seq))\nevent: \(kind.rawValue)\ndata: \(data)\n\n"
    }
}

/// An event before the store has assigned its sequence.
struct PendingEvent: Sendable {
    var kind: LiveEvent.Kind
    var id: UUID
    var millis: Int64
    var payload: String

    /// The events of a freshly stored envelope, in (time, id) order; `stored(id)` says
    /// whether a row was newly inserted (replayed rows emit nothing).
    static func of(_ batch: IngestBatch, stored: (UUID) -> Bool) -> [PendingEvent] {
        let e = batch.envelope
        var out: [PendingEvent] = []
        for l in e.locations where stored(l.id) {
            out.append(PendingEvent(kind: .fix, id: l.id, millis: l.timestamp.millis, payload: fixPayload(l, batch)))
        }
        for g in e.geofenceEvents where stored(g.id) {
            out.append(PendingEvent(kind: .geofenceEvent, id: g.id, millis: g.timestamp.millis, payload: geofencePayload(g, batch)))
        }
        return out.sorted { $0.millis != $1.millis ? $0.millis < $1.millis : $0.id.wireString < $1.id.wireString }
    }

    /// The fix's viewer object (`ViewerJSON`), as the read API renders it.
    static func fixPayload(_ l: WireLocation, _ batch: IngestBatch) -> String { ViewerJSON.fix(l, of: batch) }

    /// The geofence event's viewer object (`ViewerJSON`).
    static func geofencePayload(_ g: WireGeofenceEvent, _ batch: IngestBatch) -> String { ViewerJSON.geofenceEvent(g, of: batch) }
}

/// Where the event log stands: the newest visible sequence and how far it was pruned.
package struct EventLogMarks: Sendable, Equatable {
    /// Highest sequence stored (0 when empty).
    package var head: Int64
    /// Every event with `seq <= prunedThrough` was deleted by retention (0 when none).
    package var prunedThrough: Int64

    /// Creates marks.
    package init(head: Int64, prunedThrough: Int64) {
        self.head = head
        self.prunedThrough = prunedThrough
    }
}
