import BeekonWire
import Foundation

/// A stored beacon proximity event (SPEC BY-5) with its context. Stored once per event id:
/// a replayed or overlapping batch adds nothing.
package struct StoredProximityEvent: Sendable, Equatable {
    /// The event as it arrived.
    package var event: WireProximityEvent
    /// The device, and the session of the batch that first delivered it.
    package var installId: UUID, sessionId: UUID
    /// The batch that first delivered it.
    package var batchId: UUID
    /// When the server received that batch.
    package var receivedAt: WireTimestamp
}

/// A device's proximity events in a time range: `from` inclusive, `to` exclusive, in (timestamp, id) order.
package struct ProximityQuery: Sendable, Equatable {
    /// The device.
    package var installId: UUID
    /// Time range.
    package var from: WireTimestamp?, to: WireTimestamp?
    /// At most this many.
    package var limit: Int

    /// Creates a query.
    package init(installId: UUID, from: WireTimestamp? = nil, to: WireTimestamp? = nil, limit: Int = 500) {
        self.installId = installId
        self.from = from
        self.to = to
        self.limit = limit
    }
}
