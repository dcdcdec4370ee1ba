import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Beacon proximity events (BY-5): accepted in the envelope's optional `proximity_events`,
    /// stored once per id on SQLite and PostgreSQL, and readable back.
    @Suite struct ProximityEvents {
        static func event(minor: Int?, type: WireProximityEvent.Transition, millis: Int64, distance: Double?) -> WireProximityEvent {
            WireProximityEvent(
                id: Fixtures.ids.next(), region: "pump-4", uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                major: minor == nil ? nil : 1, minor: minor, scanner: "hci0", type: type, timestamp: WireTimestamp(millis: millis),
                distance: distance)
        }

        @Test(
            "BY-5: stored once per id, whatever batch carries it (a replayed batch, an overlapping one); read back in time order",
            arguments: Backend.all)
        func dedupedByIdInBothStores(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let install = Fixtures.ids.next()
                let enter = Self.event(minor: 3, type: .enter, millis: Fixtures.base + 2_000, distance: 0.75)
                let exit = Self.event(minor: nil, type: .exit, millis: Fixtures.base + 60_000, distance: nil)
                var first = Fixtures.envelope([], install: install)
                first.proximityEvents = [enter]
                var second = Fixtures.envelope(Fixtures.locations(2), install: install)
                second.proximityEvents = [exit, enter]
                let now = WireTimestamp(millis: Fixtures.base + 3_600_000)
                _ = try await store.ingest(IngestBatch(envelope: first, receivedAt: now))
                _ = try await store.ingest(IngestBatch(envelope: first, receivedAt: now))  // a replay of the same batch
                _ = try await store.ingest(IngestBatch(envelope: second, receivedAt: now))
                let stored = try await store.proximityEvents(ProximityQuery(installId: install))
                #expect(stored.map(\.event) == [enter, exit])
                #expect(stored[0].batchId == first.batchId && stored[0].sessionId == first.sessionId && stored[0].receivedAt == now)
                #expect(stored[1].batchId == second.batchId)
                let ranged = try await store.proximityEvents(
                    ProximityQuery(installId: install, from: WireTimestamp(millis: Fixtures.base + 10_000)))
                #expect(ranged.map(\.event) == [exit])
                #expect(try await store.proximityEvents(ProximityQuery(installId: Fixtures.ids.next())).isEmpty)
            }
        }

        @Test(
            "BY-5: POST /v1/locations accepts proximity_events; GET /v1/devices/{id}/proximity-events returns them", arguments: Backend.all)
        func uploadedAndReadOverHTTP(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                let install = Fixtures.ids.next()
                var envelope = Fixtures.envelope([], install: install)
                envelope.proximityEvents = [Self.event(minor: 4, type: .enter, millis: Fixtures.base, distance: 1.5)]
                #expect(try await HTTP.upload(server, envelope).status == 200)
                #expect(try await HTTP.upload(server, envelope).status == 200)
                let url = "/v1/devices/\(install.wireString)/proximity-events"
                let body = try await server.send("GET", url).json()
                let events = try #require(body["proximity_events"] as? [[String: Any]])
                #expect(events.count == 1)
                #expect(events.first?["id"] as? String == envelope.proximityEvents[0].id.wireString)
                #expect(events.first?["minor"] as? Int == 4 && events.first?["distance"] as? Double == 1.5)
                #expect(events.first?["batch_id"] as? String == envelope.batchId.wireString)
                #expect(try await server.send("GET", url + "?limit=0").status == 400)
                #expect(try await server.send("GET", "/v1/devices/nope/proximity-events").status == 400)
            }
        }
    }
}
