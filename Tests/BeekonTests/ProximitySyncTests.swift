import BeekonTesting
import BeekonWire
import Foundation
import GRDB
import Testing

@testable import Beekon

/// Beacon proximity events in the SDK (BY-5): stored durably like geofence events, emitted on a
/// stream, uploaded at once in the envelope's optional `proximity_events`.
@Suite struct ProximitySyncTests {
    static let beacon = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func enter(_ h: Harness, minor: Int = 3, distance: Double? = 0.8) -> ProximityRecord {
        ProximityRecord(
            region: "pump-4", beacon: beacon, major: 1, minor: minor, scanner: "hci0", transition: .enter,
            timestamp: h.clock.now(), distance: distance)
    }

    @Test("BY-5: a recorded event is stored, emitted, uploaded at once in proximity_events, and leaves the queue on 2xx")
    func recordedEventsUploadAtOnce() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport, ids: SequentialIDs())
        try await configureSync(beekon, syncConfig())
        let before = await transport.requests.count
        var stream = beekon.proximityEvents.makeAsyncIterator()
        let exit = ProximityRecord(
            region: "pump-4", beacon: Self.beacon, scanner: "hci0", transition: .exit, timestamp: h.clock.now().addingTimeInterval(30))
        let stored = try await beekon.recordProximity([Self.enter(h), exit])
        #expect(stored.count == 2 && Set(stored.map(\.id)).count == 2)
        #expect(await stream.next() == stored[0])
        // No fix is pending and sync() was not called: the event itself woke the engine.
        await transport.waitForRequests(before + 1)
        let request = try #require(await transport.requests.last)
        let envelope = request.envelope
        #expect(envelope.locations.isEmpty)
        #expect(envelope.proximityEvents.map(\.id) == stored.map(\.id))
        #expect(envelope.proximityEvents[0].minor == 3 && envelope.proximityEvents[0].distance == 0.8)
        #expect(
            envelope.proximityEvents[1].type == .exit && envelope.proximityEvents[1].distance == nil
                && envelope.proximityEvents[1].major == nil)
        #expect(request.json.contains(#""proximity_events":[{"id":"#))
        try await beekon.sync()
        #expect(try await beekon.pendingUploadCount() == 0)
        let history = try await beekon.proximityEventHistory(from: .distantPast, to: .distantFuture)
        #expect(history == stored, "readable back after the upload")
    }

    @Test("BY-5: events survive a restart and a failed upload, and go out with the same id on the retry")
    func durableAcrossRestartAndRetry() async throws {
        let h = Harness()
        let failing = ScriptedTransport(fallback: .success(HTTPResponse(status: 503)))
        var ids: [UUID] = []
        do {
            let beekon = h.beekon(transport: failing, ids: SequentialIDs())
            try await beekon.configure(syncConfig())
            ids = try await beekon.recordProximity([Self.enter(h)]).map(\.id)
            await beekon.shutdown()
        }
        let transport = ScriptedTransport()
        let again = h.beekon(transport: transport)
        #expect(try await again.pendingUploadCount() == 1)
        try await configureSync(again, syncConfig())
        let sent = await transport.requests.flatMap { $0.envelope.proximityEvents.map(\.id) }
        #expect(sent == ids)
        #expect(try await again.pendingUploadCount() == 0)
    }

    @Test("BY-5: a batch rejected with 422 sets its proximity events aside; they are not resent")
    func rejectedBatchSetsEventsAside() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: 422)
        let beekon = h.beekon(transport: transport)
        try await beekon.configure(syncConfig())
        try await beekon.recordProximity([Self.enter(h)])
        try await beekon.sync()
        #expect(try await beekon.pendingUploadCount() == 0)
        let count = await transport.requests.count
        try await beekon.sync()
        #expect(await transport.requests.count == count)
    }

    @Test("BY-5: a record schema v1 cannot carry is refused with one line naming it, and nothing is stored")
    func invalidRecordsAreRefused() async throws {
        let h = Harness()
        let beekon = h.beekon()
        for (bad, word) in [
            (ProximityRecord(region: "", beacon: Self.beacon, scanner: "s", transition: .enter, timestamp: h.clock.now()), "region"),
            (
                ProximityRecord(
                    region: "r", beacon: Self.beacon, minor: 70_000, scanner: "s", transition: .enter, timestamp: h.clock.now()), "minor"
            ),
            (Self.enter(h, distance: -.infinity), "distance"),
        ] {
            await #expect {
                try await beekon.recordProximity([Self.enter(h), bad])
            } throws: { error in
                "\(error)".contains("proximity event 1") && "\(error)".contains(word)
            }
        }
        #expect(try await beekon.proximityEventHistory(from: .distantPast, to: .distantFuture).isEmpty)
    }

    @Test("ST-6, BY-5: the v5-proximity migration runs after v4 and creates the queue table")
    func migration() async throws {
        let h = Harness()
        _ = try await h.beekon().pendingUploadCount()
        let queue = try DatabaseQueue(path: h.dir.db)
        let applied = try await queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        let v4 = try #require(applied.firstIndex(of: "v4-batch-index"))
        #expect(applied.firstIndex(of: "v5-proximity").map { $0 > v4 } == true)
        let columns = try await queue.read { db in try db.columns(in: "proximity_event").map(\.name) }
        #expect(columns.contains("upload_state") && columns.contains("batch_id"))
    }
}
