/// The slow-viewer rule of the live stream (BY-1, BY-7, BY-8), as a value: at each new
/// heartbeat tick a writable viewer that was sent nothing since the previous tick gets a
/// keep-alive comment, and a viewer still not writable at ``limit`` consecutive ticks is
/// closed. ``LiveViewerHandler`` runs its decisions; the Hummingbird route
/// (``LiveController``), which cannot see writability, runs its keep-alives.
///
/// A stream that carried events since the last tick needs no comment to stay open through a
/// proxy's idle timeout. Writing one anyway cost a write to every viewer of the instance at
/// every tick: at 10,000 viewers a wave as large as an event's, which delayed the uploads and
/// events that met it (issue 32).
struct ViewerStallRule: Sendable, Equatable {
    /// What a heartbeat check decides.
    enum Action: Sendable, Equatable {
        /// No new tick since the last check.
        case none
        /// A new tick, the viewer writable: send a keep-alive comment.
        case keepAlive
        /// A new tick, the viewer still not writable, under the limit: keep waiting.
        case wait
        /// Not writable for `beats` consecutive ticks: close the viewer.
        case close(beats: Int)
    }

    /// Heartbeat ticks a viewer may stay unwritable before it is closed, unless told otherwise.
    static let defaultLimit = 2

    /// Heartbeat ticks a viewer may stay unwritable before it is closed.
    let limit: Int
    /// The hub's tick count at the last check.
    private(set) var beatsSeen: Int
    /// Consecutive ticks the viewer was found unwritable.
    private(set) var stalledBeats = 0
    /// Whether the viewer was sent events since the last tick.
    private(set) var sentSinceTick = false

    /// A rule for a viewer subscribed when the hub had ticked `beats` times.
    init(beats: Int, limit: Int = defaultLimit) {
        beatsSeen = beats
        self.limit = max(1, limit)
    }

    /// Notes that events were written to the viewer: the next tick sends no keep-alive.
    mutating func noteSent() { sentSinceTick = true }

    /// The decision at a check: `beats` is the hub's tick count now, `writable` the channel's state.
    /// A check that sees more than one new tick (wake-ups coalesced on a busy loop) sends the
    /// keep-alive even after events: they may have gone out before the earlier tick, and the
    /// stream must get a byte at least every two ticks.
    mutating func check(beats: Int, writable: Bool) -> Action {
        guard beats != beatsSeen else { return .none }
        let ticks = beats - beatsSeen
        beatsSeen = beats
        let sent = sentSinceTick
        sentSinceTick = false
        guard !writable else {
            stalledBeats = 0
            return sent && ticks == 1 ? .none : .keepAlive
        }
        stalledBeats += 1
        return stalledBeats >= limit ? .close(beats: stalledBeats) : .wait
    }
}
