import BeekonPrimitives
import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Keeps every device's `DeviceStatus` and publishes the changes as `device` events (the
/// store writes a change only when it differs from the stored status, so several instances
/// publish each change once).
///
/// The work per upload does not grow with the number of devices (issue 32): an accepted
/// upload updates its own device's times in memory (`ingested`) and that device alone is
/// judged again. Each device has one entry in a queue ordered by the time its status next
/// changes without an upload (`DeviceStatus.nextChange`); the loop sleeps until the first
/// entry is due (at most `interval`) and re-reads only the devices that are due, from the
/// store, so uploads another instance received count too. Before publishing a change it
/// also re-reads that device (another instance may know a newer fix). Every device is read
/// and judged at start and every `resyncInterval` (devices first seen by another instance).
final class DeviceStatusMonitor: Service, Sendable {
    let store: any LocationStore
    let defaultExpectedSeconds: Int
    let interval: Duration
    let resyncInterval: Duration
    let now: @Sendable () -> Date
    /// Waits out the timer; the server's injected clock (tests drive it).
    let sleep: Sleeper
    let logger: Logger
    let onPublished: @Sendable () -> Void
    private let state = Locked(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// What the monitor knows; changed by uploads (any task) and by the loop.
    struct State: Sendable {
        /// Each device's times as last learnt.
        var devices: [UUID: DeviceTimes] = [:]
        /// The status last published (or found already stored) per device.
        var known: [UUID: DeviceStatus] = [:]
        /// Devices with an upload since the loop last ran.
        var changed: Set<UUID> = []
        /// When each device's queue entry is due; entries not matching are stale.
        var scheduled: [UUID: Int64] = [:]
        var queue = DueQueue()
        /// Unix ms of the next full pass (0: at once).
        var resyncAt: Int64 = 0
    }

    init(
        store: any LocationStore, defaultExpectedSeconds: Int, interval: Duration, now: @escaping @Sendable () -> Date,
        logger: Logger, onPublished: @escaping @Sendable () -> Void,
        sleep: @escaping Sleeper = realSleep
    ) {
        self.store = store
        self.defaultExpectedSeconds = defaultExpectedSeconds
        self.interval = interval
        resyncInterval = interval * 60
        self.now = now
        self.sleep = sleep
        self.logger = logger
        self.onPublished = onPublished
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// An upload from the device was accepted (committed): its contact, and perhaps its
    /// newest fix, changed. Constant work; the loop judges the device soon.
    func ingested(_ batch: IngestBatch) {
        let update = DeviceTimes(batch)
        state.withLock { s in
            s.devices[update.installId] = s.devices[update.installId].map { $0.merged(update) } ?? update
            s.changed.insert(update.installId)
        }
        wake.yield()
    }

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { [wake] in
                while !Task.isCancelled {
                    try? await self.sleep(self.nextSleep())
                    wake.yield()
                }
            }
            await cancelWhenGracefulShutdown {
                var iterator = self.wakes.makeAsyncIterator()
                while await iterator.next() != nil {
                    await self.evaluate()
                }
            }
            group.cancelAll()
        }
    }

    /// Every device's times as last learnt (from its uploads here and the store's full passes):
    /// what the nudger looks at without reading the store.
    func knownTimes() -> [DeviceTimes] {
        state.withLock { Array($0.devices.values) }
    }

    /// The timer: until the first queue entry is due, at most `interval`.
    func nextSleep() -> Duration {
        let nowMillis = WireTimestamp(now()).millis
        guard let due = state.withLock({ $0.queue.first?.due }) else { return interval }
        return min(interval, .milliseconds(max(1, due - nowMillis)))
    }

    /// The status of a device at `nowMillis`.
    func status(of d: DeviceSummary, nowMillis: Int64) -> DeviceStatus {
        status(of: DeviceTimes(d), nowMillis: nowMillis)
    }

    func status(of t: DeviceTimes, nowMillis: Int64) -> DeviceStatus {
        DeviceStatus.of(
            lastFixMillis: t.lastFixMillis, lastContactMillis: t.lastContactMillis,
            expectedSeconds: t.expectedSeconds ?? defaultExpectedSeconds, nowMillis: nowMillis)
    }

    /// One pass: the devices uploads changed, the devices whose status is due to change,
    /// and every device when a full pass is due.
    func evaluate() async {
        let nowMillis = WireTimestamp(now()).millis
        let (changed, due, resync) = state.withLock { s -> (Set<UUID>, [UUID], Bool) in
            let changed = s.changed
            s.changed = []
            var due: [UUID] = []
            while let first = s.queue.first, first.due <= nowMillis {
                s.queue.removeFirst()
                guard s.scheduled[first.id] == first.due else { continue }
                s.scheduled[first.id] = nil
                due.append(first.id)
            }
            let resync = s.resyncAt <= nowMillis
            if resync { s.resyncAt = nowMillis + Self.millis(resyncInterval) }
            return (changed, due, resync)
        }
        var published = false
        if resync, let all = try? await store.deviceTimes(installId: nil) {
            for times in all {
                learn(times)
                published = await judge(times.installId, read: .never, nowMillis: nowMillis) || published
            }
        }
        for id in changed { published = await judge(id, read: .onChange, nowMillis: nowMillis) || published }
        for id in due where !changed.contains(id) { published = await judge(id, read: .always, nowMillis: nowMillis) || published }
        if published { onPublished() }
    }

    private func learn(_ times: DeviceTimes) {
        state.withLock { s in s.devices[times.installId] = s.devices[times.installId].map { $0.merged(times) } ?? times }
    }

    /// When `judge` re-reads the device from the store first.
    enum Read { case never, always, onChange }

    /// Judges one device; re-reads it from the store first when asked (a due change) or when
    /// the judgement differs from the known status (a change is published only from the
    /// stored truth). Publishes a change, schedules the next one; returns whether it published.
    private func judge(_ id: UUID, read: Read, nowMillis: Int64) async -> Bool {
        guard var times = state.withLock({ $0.devices[id] }) else { return false }
        let known = state.withLock { $0.known[id] }
        if read == .always || (read == .onChange && status(of: times, nowMillis: nowMillis) != known) {
            if let stored = try? await store.deviceTimes(installId: id).first {
                learn(stored)
                times = state.withLock { $0.devices[id] } ?? times
            }
        }
        let s = status(of: times, nowMillis: nowMillis)
        var published = false
        if s != known {
            do {
                published = try await store.publishDeviceStatus(
                    installId: id, status: s.rawValue, payload: payload(times, s, nowMillis), atMillis: nowMillis)
                state.withLock { $0.known[id] = s }
            } catch {
                logger.warning("device status not published", metadata: ["error": "\(error)"])
            }
        }
        let next = DeviceStatus.nextChange(
            lastFixMillis: times.lastFixMillis, lastContactMillis: times.lastContactMillis,
            expectedSeconds: times.expectedSeconds ?? defaultExpectedSeconds, nowMillis: nowMillis)
        if let next {
            state.withLock { st in
                // One live entry per device: a later due time waits for the earlier entry,
                // which re-judges and moves on.
                guard st.scheduled[id].map({ next < $0 }) ?? true else { return }
                st.scheduled[id] = next
                st.queue.insert(due: next, id: id)
            }
        }
        return published
    }

    static func millis(_ d: Duration) -> Int64 {
        d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
    }

    /// The `device` event: `{"install_id","status","last_contact_at","last_fix_at","paused_since","expected_interval_seconds","at"}`.
    func payload(_ t: DeviceTimes, _ s: DeviceStatus, _ nowMillis: Int64) -> String {
        let event = WireDeviceStatusEvent(
            installId: t.installId, status: s, lastContactAt: WireTimestamp(millis: t.lastContactMillis),
            lastFixAt: t.lastFixMillis.map { WireTimestamp(millis: $0) },
            pausedSince: t.pausedSinceMillis(nowMillis: nowMillis).map { WireTimestamp(millis: $0) },
            expectedIntervalSeconds: t.expectedSeconds ?? defaultExpectedSeconds,
            at: WireTimestamp(millis: nowMillis))
        return String(decoding: event.encoded(), as: UTF8.self)
    }
}

/// A binary min-heap of (due time, device): the device-status timer's queue.
struct DueQueue: Sendable {
    private var items: [(due: Int64, id: UUID)] = []

    var first: (due: Int64, id: UUID)? { items.first }
    var count: Int { items.count }

    mutating func insert(due: Int64, id: UUID) {
        items.append((due, id))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].due < items[parent].due else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func removeFirst() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var m = i
            if l < items.count, items[l].due < items[m].due { m = l }
            if r < items.count, items[r].due < items[m].due { m = r }
            guard m != i else { return }
            items.swapAt(i, m)
            i = m
        }
    }
}
