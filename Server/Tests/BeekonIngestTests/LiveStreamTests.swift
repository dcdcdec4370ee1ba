import BeekonIngest
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// `GET /v1/live` over real HTTP with the SDK's `LiveViewer` (BY-1, BY-7, BY-8, IN-6).
    @Suite struct LiveStream {
        /// BY-7/BY-8: a viewer that reconnects with Last-Event-ID after N batches were ingested gets
        /// exactly the missed events, in commit order, none twice — late and out-of-fix-time-order
        /// fixes included — then live events; a replayed batch emits nothing.
        @Test(arguments: Backend.all)
        func resumeDeliversExactlyTheMissedEvents(_ backend: Backend) async throws {
            try await withServer(backend) { server, _ in
                let url = server.base + "/v1/live"
                let install = Fixtures.ids.next()
                let first = Fixtures.envelope(Fixtures.locations(3), install: install)
                #expect(try await HTTP.upload(server, first).status == 200)
                let seen = try await Live.fixes(url, after: "0", count: 3)
                #expect(seen.map(Live.fixID) == first.locations.map { $0.id.wireString })
                #expect(Live.strictlyIncreasing(seen))
                let resumeAt = try #require(seen.last?.id)

                // While disconnected: 4 batches, one of them a backlog older than everything so far
                // (out of fix-time order), one with a geofence event, plus a replay of the first batch.
                var missed: [WireEnvelope] = []
                for i in 0..<4 {
                    let start = i == 2 ? Fixtures.base - 86_400_000 : Fixtures.base + Int64(i + 1) * 3_600_000
                    var e = Fixtures.envelope(Fixtures.locations(5, startMillis: start), install: install)
                    if i == 1 {
                        e.geofenceEvents = [
                            WireGeofenceEvent(
                                id: Fixtures.ids.next(), geofenceId: "home", type: .enter,
                                timestamp: WireTimestamp(millis: start))
                        ]
                    }
                    #expect(try await HTTP.upload(server, e).status == 200)
                    missed.append(e)
                }
                let replay = try await HTTP.upload(server, first)
                #expect(try replay.json()["duplicate_batch"] as? Bool == true)

                let live = Fixtures.envelope(Fixtures.locations(2, startMillis: Fixtures.base + 86_400_000), install: install)
                let liveIDs = live.locations.map { $0.id.wireString }
                // Sent once the resumed stream has delivered the backfill: its events arrive live.
                let backfilled = missed.reduce(0) { $0 + $1.locations.count + $1.geofenceEvents.count }
                let (reached, signal) = AsyncStream.makeStream(of: Void.self)
                let uploader = Task {
                    for await _ in reached {
                        _ = try await HTTP.upload(server, live)
                        break
                    }
                }
                let resumed = try await Live.collect(url, lastEventID: resumeAt) { ms in
                    if ms.count == backfilled { signal.yield() }
                    return liveIDs.allSatisfy { id in ms.contains { Live.fixID($0) == id } }
                }
                signal.finish()
                try await uploader.value
                let expected =
                    missed.flatMap { e in
                        (e.locations.map { ($0.timestamp.millis, $0.id.wireString) }
                            + e.geofenceEvents.map { ($0.timestamp.millis, $0.id.wireString) })
                            .sorted { $0 < $1 }.map(\.1)
                    } + liveIDs
                #expect(resumed.map(Live.fixID) == expected)
                #expect(resumed.filter { $0.event == "geofence_event" }.count == 1)
                #expect(Live.strictlyIncreasing(resumed))
                #expect(Int64(resumed[0].id ?? "") ?? 0 > Int64(resumeAt) ?? .max)
                #expect(Set(resumed.compactMap(Live.fixID)).isDisjoint(with: first.locations.map { $0.id.wireString }))
            }
        }

        /// BY-8: a cursor behind the retention mark gets a `reset` event (id = the head), then live events.
        @Test(arguments: Backend.all)
        func cursorBeyondRetentionGetsReset(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withServer(backend, now: { clock.now() }) { server, db in
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(4))).status == 200)
                let store = try IngestServer.makeStore(
                    IngestConfiguration(database: db.location, databaseTimeoutSeconds: testDatabaseTimeout),
                    logger: testLogger)
                let marks = try await IngestServer.withServices(store.services, logger: testLogger) {
                    try await store.pruneEvents(receivedBefore: WireTimestamp(clock.now().addingTimeInterval(3600)))
                    return try await store.eventMarks()
                }
                #expect(marks.prunedThrough >= 4)
                let got = try await Live.collect(server.base + "/v1/live", lastEventID: "1") { !$0.isEmpty }
                #expect(got.first?.event == "reset")
                // The reset's id is the head at connection time (a device-status event may have followed the prune).
                #expect(Int64(got.first?.id ?? "") ?? 0 >= marks.head)
                #expect(Live.object(got[0])["reason"] as? String == "beyond_retention")
            }
        }

        /// BY-7: the device filter and a heartbeat comment on an idle stream.
        @Test func deviceFilterAndHeartbeat() async throws {
            try await withServer(.sqlite, configure: { $0.liveHeartbeatSeconds = 0.1 }) { server, _ in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(2), install: b)).status == 200)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(2), install: a)).status == 200)
                let got = try await Live.fixes(server.base + "/v1/live?devices=\(a.wireString)", after: "0", count: 2)
                #expect(got.allSatisfy { Live.object($0)["install_id"] as? String == a.wireString })
                // The first comment is the greeting, the next ones are heartbeats of the idle stream.
                let viewer = LiveViewer(url: URL(string: server.base + "/v1/live")!)
                var comments = 0
                for await event in viewer.events() where event == .heartbeat {
                    comments += 1
                    if comments == 3 { break }
                }
                #expect(comments == 3)
                #expect(viewer.serverRetryMillis == 2000)
                let bad = try await HTTP.send("GET", server.base + "/v1/live?devices=nope")
                #expect(bad.status == 400)
            }
        }
    }
}

extension Ingest.LiveStream {
    /// BY-7, scale-out: two instances on one PostgreSQL, batches alternating between them (and
    /// concurrent), a viewer on each: both see every event, in the same commit order, none twice.
    @Test func twoInstancesOnOnePostgresDeliverTheSameOrder() async throws {
        guard Backend.all.contains(.postgres) else { return }
        let db = try await Backend.postgres.freshDatabase()
        let config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
        let one = try await TestServer.start(config)
        let two = try await TestServer.start(config)
        do {
            let warmup = Fixtures.envelope(Fixtures.locations(1))
            #expect(try await HTTP.upload(one, warmup).status == 200)
            var expected = Set(warmup.locations.map { $0.id.wireString })
            var batches: [WireEnvelope] = []
            for _ in 0..<12 { batches.append(Fixtures.envelope(Fixtures.locations(4))) }
            for b in batches { expected.formUnion(b.locations.map { $0.id.wireString }) }
            let total = expected.count
            async let onOne = Live.fixes(one.base + "/v1/live", after: "0", count: total)
            async let onTwo = Live.fixes(two.base + "/v1/live", after: "0", count: total)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (i, b) in batches.enumerated() {
                    group.addTask {
                        let status = try await HTTP.upload(i % 2 == 0 ? one : two, b).status
                        #expect(status == 200)
                    }
                    if i % 3 == 2 { try await group.waitForAll() }
                }
                try await group.waitForAll()
            }
            // Replays on the other instance emit nothing.
            for (i, b) in batches.enumerated() { _ = try await HTTP.upload(i % 2 == 0 ? two : one, b) }
            let (a, b) = try await (onOne, onTwo)
            #expect(a.map(\.id) == b.map(\.id))
            #expect(a.map(\.data) == b.map(\.data))
            #expect(Set(a.compactMap(Live.fixID)) == expected)
            #expect(a.count == total)
            #expect(Live.strictlyIncreasing(a))
            // A late viewer from 0 gets the very same sequence, then the marker batch: the replays emitted nothing.
            let marker = Fixtures.envelope(Fixtures.locations(1))
            #expect(try await HTTP.upload(one, marker).status == 200)
            let markerID = marker.locations[0].id.wireString
            let replayed = try await Live.collect(two.base + "/v1/live", lastEventID: "0") { ms in
                ms.contains { Live.fixID($0) == markerID }
            }
            #expect(replayed.map(\.id) == a.map(\.id) + [replayed.last?.id])
        } catch {
            try? await one.stop()
            try? await two.stop()
            throw error
        }
        try await one.stop()
        try await two.stop()
    }
}
