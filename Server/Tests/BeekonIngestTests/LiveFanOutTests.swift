import BeekonPrimitives
import BeekonTesting
import BeekonWire
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import BeekonIngest

/// Issue 32: the live stream's fan-out renders each event once per precision (``LiveFrameCache``)
/// and wakes the viewers of an event loop in one task on it. What a viewer receives must not
/// change: the same bytes as the per-viewer rendering, in order, and a coarsened share never
/// gets a full-precision frame (BY-7, IN-6, XR-4).
@Suite struct LiveFanOutTests {
    static let install = UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff")!
    static let other = UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-000000000001")!
    static let nowMillis: Int64 = 1_781_500_000_000

    /// Fixes of two devices at full precision, old and new, a geofence event, a device-status
    /// event and a locate event, in log order.
    static var events: [LiveEvent] {
        var out: [LiveEvent] = []
        var seq: Int64 = 100
        for (i, device) in [install, other, install, install].enumerated() {
            var fix = ViewerJSONTests.fix
            fix.installId = device
            fix.location.latitude = 52.520_008_3 + Double(i) * 0.001_234_5
            fix.location.longitude = 13.404_954_1 - Double(i) * 0.002_345_6
            // The second fix is two hours old: outside a one-hour history window.
            fix.location.timestamp = WireTimestamp(millis: nowMillis - (i == 1 ? 7_200_000 : Int64(i) * 1_000))
            seq += 1
            let millis = fix.location.timestamp.millis
            out.append(LiveEvent(seq: seq, kind: .fix, installId: device, millis: millis, payload: ViewerJSON.fix(fix)))
        }
        seq += 1
        out.append(
            LiveEvent(
                seq: seq, kind: .geofenceEvent, installId: install, millis: nowMillis,
                payload: #"{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e99","geofence_id":"home","type":"enter"}"#))
        seq += 1
        out.append(LiveEvent(seq: seq, kind: .device, installId: other, millis: nowMillis - 9_000_000, payload: #"{"status":"stale"}"#))
        seq += 1
        out.append(LiveEvent(seq: seq, kind: .locate, installId: install, millis: nowMillis, payload: #"{"state":"pending"}"#))
        return out
    }

    /// Full precision, two coarsenings, a device filter, a history window and hours of the day.
    static let scopes: [ViewerScope] = [
        .everything,
        scope(nil, ShareScope(live: true, precisionMeters: 1_000)),
        scope([install], ShareScope(historySeconds: 3_600, live: true, precisionMeters: 50)),
        scope([other], ShareScope(live: true)),
        scope(nil, ShareScope(historySeconds: 3_600, live: true)),
        scope(nil, ShareScope(live: true, hours: "00:00-12:00", timeZone: "UTC")),
    ]

    static func scope(_ devices: Set<UUID>?, _ rules: ShareScope) -> ViewerScope { ViewerScope(devices: devices, rules: rules) }

    /// The rendering before issue 32's change, per viewer: each admitted event's frame with its
    /// payload as the scope shows it.
    static func perViewer(_ events: [LiveEvent], _ scope: ViewerScope) -> String {
        events.filter { scope.admits($0, nowMillis: nowMillis) }.map { $0.frame(data: scope.payload(of: $0)) }.joined()
    }

    static func start(_ scope: ViewerScope) -> LiveStart {
        LiveStart(
            scope: scope, grant: ViewerGrant(scope: scope, shareId: nil), requested: nil,
            marks: EventLogMarks(head: 0, prunedThrough: 0), retryMillis: 2_000)
    }

    /// BY-7, IN-6: through one shared cache, in every order of viewers (full precision first, so a
    /// coarsened viewer comes after the precise frames are cached, and the reverse), every viewer
    /// gets exactly the bytes the per-viewer rendering gave it, page by page and event by event.
    @Test func sharedFramesAreThePerViewerFramesByteForByte() {
        let events = Self.events
        for order in [Self.scopes, Self.scopes.reversed()] {
            let cache = LiveFrameCache()
            for scope in order {
                let start = Self.start(scope)
                let expected = Self.perViewer(events, scope)
                #expect(!expected.isEmpty)
                #expect(String(buffer: start.frames(events, nowMillis: Self.nowMillis, shared: cache)) == expected)
                #expect(String(buffer: start.frames(events, nowMillis: Self.nowMillis)) == expected)
                // One event at a time (a single cached frame is sent uncopied).
                let oneByOne = events.map { String(buffer: start.frames([$0], nowMillis: Self.nowMillis, shared: cache)) }.joined()
                #expect(oneByOne == expected)
            }
            // One frame per rendering: the device and locate events one each, the geofence event
            // four (as stored; its id withheld under a precision, issue 50; its receipt withheld
            // for the scopes limited in time; both for the 50 m window); fixes per precision and
            // receipt — full 4, 1 km 4, 50 m withheld 3 (it sees only `install`'s three), full
            // precision withheld 4 (the window's three newer and, 03:06 UTC, the old fix the
            // hours admit).
            #expect(cache.count == 2 + 4 + 4 + 4 + 3 + 4)
        }
    }

    /// XR-4: a coarsened viewer served after a precise one from the same cache never receives
    /// the exact coordinates, and its frames are the coarsened renderings.
    @Test func aCoarsenedViewerNeverGetsACachedPreciseFrame() throws {
        let events = Self.events
        let cache = LiveFrameCache()
        let precise = String(buffer: Self.start(.everything).frames(events, nowMillis: Self.nowMillis, shared: cache))
        #expect(precise.contains("52.5200083"))
        let coarse = Self.scope(nil, ShareScope(live: true, precisionMeters: 1_000))
        let got = String(buffer: Self.start(coarse).frames(events, nowMillis: Self.nowMillis, shared: cache))
        #expect(!got.contains("52.5200083") && !got.contains("13.4049541"))
        let fix = try #require(events.first)
        #expect(got.hasPrefix(fix.frame(data: coarse.fixPayload(fix.payload))))
    }

    /// The cache drops the frames of events that left the ring, and starts over at its limit.
    @Test func forgottenAndBoundedFrames() {
        let events = Self.events
        let cache = LiveFrameCache(limit: 5)
        _ = Self.start(.everything).frames(Array(events.prefix(4)), nowMillis: Self.nowMillis, shared: cache)
        #expect(cache.count == 4)
        cache.forget(through: events[1].seq)
        #expect(cache.count == 2)
        _ = Self.start(.everything).frames(Array(events.suffix(4)), nowMillis: Self.nowMillis, shared: cache)
        #expect(cache.count <= 5)
        // Whatever was dropped is rendered again, identically.
        let again = String(buffer: Self.start(.everything).frames(events, nowMillis: Self.nowMillis, shared: cache))
        #expect(again == Self.perViewer(events, .everything))
    }

    /// The hub wakes an event-driven viewer on its own event loop, each once, and a viewer
    /// without a loop directly (BY-7: the share re-check path).
    @Test func wakeUpsRunOnEachViewersLoopInOrder() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-fanout-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let store = try SQLiteLocationStore(path: path, logger: testLogger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = [group.next(), group.next()]
        #expect(loops[0] !== loops[1])
        let hub = LiveHub(store: store, logger: testLogger, shareIsActive: { _ in false })
        let woken = Locked([Int: [Int]]())
        let offLoop = Locked(0)
        for i in 0..<400 {
            let loop = loops[i % 2]
            _ = hub.subscribe(
                share: "sh_\(i % 3)", loop: loop,
                wake: {
                    if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
                    woken.withLock { $0[i % 2, default: []].append(i) }
                }, finish: {})
        }
        let direct = Locked(0)
        _ = hub.subscribe(share: "sh_0", wake: { direct.withLock { $0 += 1 } }, finish: {})
        await hub.recheckShares()
        // Each loop runs its queue in order: a task submitted now runs after the hub's.
        for loop in loops { try await loop.submit {}.get() }
        #expect(offLoop.value == 0)
        #expect(direct.value == 1)
        #expect(woken.value[0]?.sorted() == Array(stride(from: 0, to: 400, by: 2)))
        #expect(woken.value[1]?.sorted() == Array(stride(from: 1, to: 400, by: 2)))
        try await group.shutdownGracefully()
    }
}

/// Issue 32: the listen backlog defaults to the kernel's ceiling (`net.core.somaxconn`), not
/// Hummingbird's 256, which 2,000 viewers connecting at once overflowed.
@Suite struct ListenBacklogTests {
    @Test func defaultIsTheKernelsCeilingOr4096() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-somaxconn-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "8192\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(ConnectionLimit.defaultListenBacklog(somaxconnPath: path) == 8_192)
        try "not a number".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(ConnectionLimit.defaultListenBacklog(somaxconnPath: path) == 4_096)
        #expect(ConnectionLimit.defaultListenBacklog(somaxconnPath: path + "-missing") == 4_096)
    }
}
