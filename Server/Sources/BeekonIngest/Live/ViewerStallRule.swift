/// The slow-viewer rule of the event-driven live stream (BY-7, BY-8), as a value: at each new
/// heartbeat tick a writable viewer gets a keep-alive comment, and a viewer still not writable
/// at ``limit`` consecutive ticks is closed. ``LiveViewerHandler`` runs its decisions.
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

    /// A rule for a viewer subscribed when the hub had ticked `beats` times.
    init(beats: Int, limit: Int = defaultLimit) {
        beatsSeen = beats
        self.limit = max(1, limit)
    }

    /// The decision at a check: `beats` is the hub's tick count now, `writable` the channel's state.
    mutating func check(beats: Int, writable: Bool) -> Action {
        guard beats != beatsSeen else { return .none }
        beatsSeen = beats
        guard !writable else {
            stalledBeats = 0
            return .keepAlive
        }
        stalledBeats += 1
        return stalledBeats >= limit ? .close(beats: stalledBeats) : .wait
    }
}
