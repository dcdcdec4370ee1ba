import BeekonPrimitives
import NIOCore

/// Each live event's SSE frame rendered once per precision and shared by every viewer of an
/// instance (issue 32). Before, every viewer rendered every event itself — for a coarsened
/// share that meant parsing and re-encoding the fix's JSON once per viewer per event.
///
/// A frame depends only on the event and, for a `fix`, on the viewer's precision (full, or a
/// share's coarsening in metres) and, for a `fix` or `geofence_event`, on whether the viewer
/// sees when the device was in contact; for a `geofence_event`, on whether it reads names (a
/// share with a precision does not, issue 50); for a `locate`, on the share it goes to (another
/// share's id is withheld); `device` is the same bytes for everyone. So
/// the key is the event's sequence plus that rendering (``ViewerScope/rendering(of:)``): a
/// coarsened viewer can never be handed the full-precision frame, because the two have
/// different keys.
/// What a viewer may see at all (its devices, its history window) is decided before the cache
/// is asked, by ``ViewerScope/admits(_:nowMillis:)``.
final class LiveFrameCache: Sendable {
    /// What makes one viewer's frame of an event differ from another's (``ViewerScope/rendering(of:)``).
    struct Rendering: Hashable {
        /// The precision of a fix's frame (nil: full); always nil for the other kinds.
        let meters: Double?
        /// A fix's or geofence event's `received_at` and `batch_id` withheld (a share limited in time).
        let withholdsReceipt: Bool
        /// A geofence event's id withheld (a share with a precision, ``ViewerScope/withholdsNames``).
        var withholdsNames = false
        /// The share a `locate` frame is for (another share's id withheld, ``ViewerScope/requester(_:)``).
        var share: String? = nil
    }

    private struct Key: Hashable {
        let seq: Int64
        let rendering: Rendering
        /// The id written as a share's opaque id (``LiveEventIDs``, one key per server).
        let opaqueID: Bool
    }

    private let frames = Locked([Key: ByteBuffer]())
    /// Frames kept at most; the cache starts over beyond it (they are rendered again on demand).
    let limit: Int

    /// A cache of at most `limit` frames (default 10,000, a few MiB: viewers read near the head;
    /// one further behind gets its frames rendered again, identically).
    init(limit: Int = 10_000) { self.limit = max(1, limit) }

    /// The SSE frame of `event` as a viewer with `scope` receives it: its `data` coarsened
    /// as the scope requires (``ViewerScope/payload(of:)``). The one rendering of a frame.
    /// With `ids` (a share's stream) the frame's id is the event's opaque id.
    static func render(_ event: LiveEvent, scope: ViewerScope, ids: LiveEventIDs? = nil) -> String {
        event.frame(data: scope.payload(of: event), id: ids?.token(event.seq))
    }

    /// ``render(_:scope:ids:)`` as bytes, rendered on first use and shared afterwards.
    func frame(_ event: LiveEvent, scope: ViewerScope, ids: LiveEventIDs? = nil) -> ByteBuffer {
        let key = Key(seq: event.seq, rendering: scope.rendering(of: event.kind), opaqueID: ids != nil)
        if let hit = frames.withLock({ $0[key] }) { return hit }
        let rendered = ByteBuffer(string: Self.render(event, scope: scope, ids: ids))
        frames.withLock { f in
            if f.count >= limit { f.removeAll(keepingCapacity: true) }
            f[key] = rendered
        }
        return rendered
    }

    /// Drops the frames of events up to `seq` (they left the hub's ring).
    func forget(through seq: Int64) {
        frames.withLock { f in f = f.filter { $0.key.seq > seq } }
    }

    /// Frames held now.
    var count: Int { frames.withLock { $0.count } }
}
