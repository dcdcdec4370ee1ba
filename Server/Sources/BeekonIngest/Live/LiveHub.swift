import BeekonPrimitives
import Foundation
import Logging
import NIOCore
import ServiceLifecycle

/// The per-instance tail of the event log: one task reads events after its head from
/// the store whenever it is woken (after a local commit, on a PostgreSQL NOTIFY from
/// any instance, or by its poll tick), keeps the newest ones in a ring and wakes the
/// live streams, which copy from the ring. A stream further behind than the ring reads
/// pages from the store until it reaches it. Both read the same commit-ordered log,
/// so moving a cursor from the store to the ring can neither skip nor repeat an event.
///
/// The hub also owns the streams' clocks: one heartbeat ticker counts `beats` and wakes
/// every stream, and one re-check ticker checks each share that has open streams once
/// (against the share cache) and wakes only the streams of a share that was revoked or
/// expired (issue 28, finding 5: before, it woke every share viewer every 250 ms). No
/// stream runs a timer of its own, so an idle viewer costs its connection and a
/// subscription, not a task and no work per tick. A subscriber is a pair of
/// closures: the Hummingbird route's stream wraps an `AsyncStream`; the event-driven viewer
/// (``LiveViewerHandler``) names its channel's event loop, and one signal wakes all the viewers
/// of a loop in one task on it (issue 32: not one enqueued closure per viewer per event).
///
/// Rendering is shared: ``frames`` renders each event once per precision (full, or each
/// share's coarsening) for every viewer of this instance, instead of once per viewer.
final class LiveHub: Service, Sendable {
    /// What a live stream gets from the hub for its cursor.
    enum Fetch: Equatable {
        /// Events after the cursor (empty: nothing new yet; wait for a signal).
        case events([LiveEvent])
        /// The cursor is older than the ring: read from the store.
        case backfill
        /// The hub has not read the log's head yet.
        case notReady
    }

    private struct State {
        var ready = false
        /// The highest sequence read into the ring.
        var head: Int64 = 0
        /// Every event with `seq > floor` and `seq <= head` is in `ring`.
        var floor: Int64 = 0
        var ring: [LiveEvent] = []
        var subscribers: [Int: Subscriber] = [:]
        var nextSubscriber = 0
        /// Heartbeat ticks so far; a stream writes a keep-alive comment when it changes.
        var beats = 0
    }

    private struct Subscriber {
        /// Called (on the hub's task) when the stream should look for work.
        let wake: @Sendable () -> Void
        /// Called once when the hub stops signalling it (unsubscribed, or the hub ends).
        let finish: @Sendable () -> Void
        /// The share behind the stream: woken by the re-check ticker when it no longer holds.
        let share: String?
        /// The event loop `wake` must run on (nil: any thread).
        let loop: (any EventLoop)?
        /// A command long-poll's device: woken only when a locate request of it changes, not by
        /// other events or heartbeats (nil: a live stream).
        var commandsOf: UUID? = nil
    }

    /// Time spent per stage of a delivery wave (issue 32), for `/metrics`: reading the log
    /// after a wake-up, and from the ring's update to the last viewer of a loop written.
    private struct Stages {
        var reads = 0
        var readSeconds = 0.0
        var readMax = 0.0
        var fanouts = 0
        var fanoutSeconds = 0.0
        var fanoutMax = 0.0
    }

    let store: any LocationStore
    let capacity: Int
    let pollInterval: Duration
    /// Interval of the keep-alive comments on idle streams.
    let heartbeat: Duration
    /// The heartbeat's ticks when something other than a timer drives them (tests tick by hand);
    /// nil: one tick every `heartbeat`.
    let heartbeats: AsyncStream<Void>?
    /// Interval at which the shares of open streams are re-checked (revocation, expiry).
    let recheckInterval: Duration
    /// Whether a share still holds (neither revoked nor expired); nil: no share streams.
    let shareIsActive: (@Sendable (String) async -> Bool)?
    let logger: Logger
    /// Runs the cross-instance wake-up (PostgreSQL LISTEN), calling its argument per notification.
    let listener: (@Sendable (@escaping @Sendable () -> Void) async -> Void)?
    private let state = Locked(State())
    private let stalled = Locked(0)
    private let stages = Locked(Stages())
    /// Each event's frame rendered once per precision, shared by every viewer.
    let frames = LiveFrameCache()
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(
        store: any LocationStore, capacity: Int = 20_000, pollInterval: Duration = .seconds(1),
        heartbeat: Duration = .seconds(15), recheckInterval: Duration = .milliseconds(250), logger: Logger,
        shareIsActive: (@Sendable (String) async -> Bool)? = nil, heartbeats: AsyncStream<Void>? = nil,
        listener: (@Sendable (@escaping @Sendable () -> Void) async -> Void)? = nil
    ) {
        self.shareIsActive = shareIsActive
        self.heartbeats = heartbeats
        self.store = store
        self.capacity = capacity
        self.pollInterval = pollInterval
        self.heartbeat = heartbeat
        self.recheckInterval = min(recheckInterval, heartbeat)
        self.logger = logger
        self.listener = listener
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Asks the tail task to read the log now (after a local commit).
    func poke() { wake.yield() }

    /// The highest sequence in the ring (0 before the hub is ready).
    var head: Int64 { state.withLock { $0.head } }

    /// Events after `cursor`, at most `limit`, or where to read them instead.
    func fetch(after cursor: Int64, limit: Int) -> Fetch {
        state.withLock { s in
            guard s.ready else { return .notReady }
            guard cursor >= s.floor else { return .backfill }
            guard cursor < s.head else { return .events([]) }
            // First index with seq > cursor (the ring is in seq order).
            var lo = 0
            var hi = s.ring.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if s.ring[mid].seq <= cursor { lo = mid + 1 } else { hi = mid }
            }
            return .events(Array(s.ring[lo..<min(s.ring.count, lo + limit)]))
        }
    }

    /// Heartbeat ticks so far (a stream compares it with the count it last saw).
    var beats: Int { state.withLock { $0.beats } }

    /// A signal stream that yields whenever new events are in the ring and at every
    /// heartbeat tick; with a `share`, also when that share is found revoked or expired.
    func subscribe(share: String? = nil) -> (id: Int, signals: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) {
        let (signals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = subscribe(share: share, wake: { continuation.yield() }, finish: { continuation.finish() })
        return (id, signals, continuation)
    }

    /// Registers a stream that is woken by calling `wake` — on `loop` when one is given, where
    /// one task runs the wake-ups of every stream of that loop; `finish` is called once when
    /// the hub stops signalling it.
    func subscribe(
        share: String?, loop: (any EventLoop)? = nil, wake: @escaping @Sendable () -> Void, finish: @escaping @Sendable () -> Void
    ) -> Int {
        state.withLock { s in
            s.nextSubscriber += 1
            s.subscribers[s.nextSubscriber] = Subscriber(wake: wake, finish: finish, share: share, loop: loop)
            return s.nextSubscriber
        }
    }

    /// Registers a command long-poll of `install` (issue 50): `wake` is called (on the hub's task)
    /// when the hub reads a `locate` event of that device from the log — a change on any
    /// instance — and when the hub first becomes ready, never for other events or heartbeats;
    /// `finish` once when the hub stops signalling it. Counted with the live streams.
    func subscribe(commandsOf install: UUID, wake: @escaping @Sendable () -> Void, finish: @escaping @Sendable () -> Void) -> Int {
        state.withLock { s in
            s.nextSubscriber += 1
            s.subscribers[s.nextSubscriber] = Subscriber(wake: wake, finish: finish, share: nil, loop: nil, commandsOf: install)
            return s.nextSubscriber
        }
    }

    /// Stops signalling a stream.
    func unsubscribe(_ id: Int) {
        state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
    }

    /// Number of open live streams on this instance.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Counts a viewer closed because it stopped reading (``LiveViewerHandler``'s slow-viewer rule).
    func noteStalled() { stalled.withLock { $0 += 1 } }

    /// The hub's Prometheus series: open streams (a gauge) and viewers closed for not reading.
    func metricsText() -> String {
        """
        # HELP beekon_live_viewers Open live streams on this instance.
        # TYPE beekon_live_viewers gauge
        beekon_live_viewers \(subscriberCount)
        # HELP beekon_live_viewers_stalled_total Live viewers closed because they stopped reading.
        # TYPE beekon_live_viewers_stalled_total counter
        beekon_live_viewers_stalled_total \(stalled.withLock { $0 })
        \(stagesText())
        """
    }

    private func stagesText() -> String {
        let t = stages.withLock { $0 }
        return """
            # HELP beekon_live_read_seconds Reading new events from the log into the ring after a wake-up.
            # TYPE beekon_live_read_seconds summary
            beekon_live_read_seconds_sum \(t.readSeconds)
            beekon_live_read_seconds_count \(t.reads)
            # HELP beekon_live_read_seconds_max The longest read so far.
            # TYPE beekon_live_read_seconds_max gauge
            beekon_live_read_seconds_max \(t.readMax)
            # HELP beekon_live_fanout_seconds From new events in the ring to the last viewer of an event loop written.
            # TYPE beekon_live_fanout_seconds summary
            beekon_live_fanout_seconds_sum \(t.fanoutSeconds)
            beekon_live_fanout_seconds_count \(t.fanouts)
            # HELP beekon_live_fanout_seconds_max The longest fan-out so far.
            # TYPE beekon_live_fanout_seconds_max gauge
            beekon_live_fanout_seconds_max \(t.fanoutMax)

            """
    }

    func run() async throws {
        await withDiscardingTaskGroup { group in
            if let listener {
                group.addTask { [wake] in await listener { wake.yield() } }
            }
            group.addTask { [wake, pollInterval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: pollInterval)
                    wake.yield()
                }
            }
            group.addTask { [heartbeat, heartbeats] in
                if let heartbeats {
                    for await _ in heartbeats { self.tick() }  // ends when cancelled
                    return
                }
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    self.tick()
                }
            }
            group.addTask { [recheckInterval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: recheckInterval)
                    await self.recheckShares()
                }
            }
            await cancelWhenGracefulShutdown { await self.tail() }
            group.cancelAll()
        }
        // Open streams end with the hub (at shutdown).
        for c in state.withLock({ s in
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }) { c.finish() }
    }

    private func tail() async {
        var iterator = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            if !state.withLock({ $0.ready }) {
                do {
                    let marks = try await store.eventMarks()
                    state.withLock { s in
                        s.head = marks.head
                        s.floor = marks.head
                        s.ready = true
                    }
                    signalAll(commands: true)
                } catch {
                    logger.debug("live: cannot read the event log head (yet)", metadata: ["error": "\(error)"])
                }
            }
            await drain()
            guard await iterator.next() != nil else { return }
        }
    }

    /// Reads everything after the head into the ring, then wakes the streams.
    private func drain() async {
        guard state.withLock({ $0.ready }) else { return }
        while !Task.isCancelled {
            let head = state.withLock { $0.head }
            let page: [LiveEvent]
            let clock = ContinuousClock()
            let started = clock.now
            do {
                page = try await store.events(after: head, limit: 2_000)
            } catch {
                // Shutting down cancels the read in flight: not a failure to report.
                if Task.isCancelled { return }
                logger.warning("live: cannot read the event log", metadata: ["error": "\(error)"])
                return
            }
            guard let last = page.last else { return }
            let read = started.duration(to: clock.now).seconds
            stages.withLock { t in
                t.reads += 1
                t.readSeconds += read
                t.readMax = max(t.readMax, read)
            }
            let trimmed = state.withLock { s -> Int64? in
                s.ring.append(contentsOf: page)
                s.head = last.seq
                guard s.ring.count > capacity + capacity / 4 else { return nil }
                let drop = s.ring.count - capacity
                s.floor = s.ring[drop - 1].seq
                s.ring.removeFirst(drop)
                return s.floor
            }
            if let trimmed { frames.forget(through: trimmed) }
            signalAll(timed: true)
            wakeCommands(of: Set(page.lazy.filter { $0.kind == .locate }.map(\.installId)))
            if page.count < 2_000 { return }
        }
    }

    /// A heartbeat tick: counts it and wakes every stream, which runs its slow-viewer rule.
    private func tick() {
        state.withLock { $0.beats += 1 }
        signalAll()
    }

    /// Wakes every stream: the event-driven ones in one task per event loop, the others directly.
    /// `timed`: the fan-out of new events, whose duration per loop goes to `/metrics`. Command
    /// long-polls only with `commands` (they wait for their device's locate events alone).
    private func signalAll(timed: Bool = false, commands: Bool = false) {
        wakeAll(state.withLock { s in s.subscribers.values.filter { commands || $0.commandsOf == nil } }, timed: timed)
    }

    /// Wakes the command long-polls of these devices.
    private func wakeCommands(of installs: Set<UUID>) {
        guard !installs.isEmpty else { return }
        let targets = state.withLock { s in s.subscribers.values.filter { $0.commandsOf.map(installs.contains) == true } }
        for target in targets { target.wake() }
    }

    private func wakeAll(_ targets: [Subscriber], timed: Bool = false) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, wakes: [@Sendable () -> Void])] = [:]
        for sub in targets {
            guard let loop = sub.loop else {
                sub.wake()
                continue
            }
            byLoop[ObjectIdentifier(loop), default: (loop, [])].wakes.append(sub.wake)
        }
        let clock = ContinuousClock()
        let started = clock.now
        for (loop, wakes) in byLoop.values {
            loop.execute {
                for wake in wakes { wake() }
                guard timed else { return }
                let took = started.duration(to: clock.now).seconds
                self.stages.withLock { t in
                    t.fanouts += 1
                    t.fanoutSeconds += took
                    t.fanoutMax = max(t.fanoutMax, took)
                }
            }
        }
    }

    /// Checks each share with open streams once and wakes the streams of those that ended
    /// (they re-check and close). No share streams: no work at all.
    func recheckShares() async {
        let shares = state.withLock { s in Set(s.subscribers.values.compactMap(\.share)) }
        guard !shares.isEmpty else { return }
        var ended = Set<String>()
        for share in shares {
            // Without a checker every share stream is woken to check for itself.
            if let shareIsActive, await shareIsActive(share) { continue }
            ended.insert(share)
        }
        guard !ended.isEmpty else { return }
        wakeAll(state.withLock { s in s.subscribers.values.filter { sub in sub.share.map(ended.contains) == true } })
    }
}
