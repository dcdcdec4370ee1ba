@testable import BeekonIngest
import BeekonWire
import Foundation
import Testing

/// Runs `body` with a migrated store on a fresh database of `backend`.
func withStore<T: Sendable>(_ backend: Backend, _ body: @Sendable (any LocationStore) async throws -> T) async throws -> T {
    let db = try await backend.freshDatabase()
    defer { db.remove() }
    let store = try IngestServer.makeStore(
        IngestConfiguration(database: db.location, databaseTimeoutSeconds: testDatabaseTimeout), logger: testLogger)
    return try await IngestServer.withServices(store.services, logger: testLogger) {
        try await store.migrate()
        try await store.migrate()  // idempotent
        return try await body(store)
    }
}

extension Ingest {
    /// The `LocationStore` contract, identical on SQLite and PostgreSQL.
    @Suite struct StoreContract {
        static let now = WireTimestamp(millis: Fixtures.base + 3_600_000)

        @Test(arguments: Backend.all)
        func storesABatchAndSkipsAReplay(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let event = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "home", type: .exit,
                    timestamp: WireTimestamp(millis: Fixtures.base))
                let e = Fixtures.envelope(Fixtures.locations(5), events: [event], extras: ["user_id": "u-1"])
                let first = try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now))
                #expect(
                    first
                        == IngestResult(
                            duplicateBatch: false, locationsStored: 5, locationsDuplicate: 0, eventsStored: 1, eventsDuplicate: 0))
                let again = try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now))
                #expect(
                    again
                        == IngestResult(
                            duplicateBatch: true, locationsStored: 0, locationsDuplicate: 5, eventsStored: 0, eventsDuplicate: 1))
                let track = try await store.track(sessionId: e.sessionId)
                #expect(track.map(\.location) == e.locations)
                #expect(track.allSatisfy { $0.batchId == e.batchId && $0.installId == e.device.installId && $0.receivedAt == Self.now })
            }
        }

        @Test(arguments: Backend.all)
        func overlappingBatchesStoreEachFixOnce(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let fixes = Fixtures.locations(30)
                let session = Fixtures.ids.next()
                let install = Fixtures.ids.next()
                let a = Fixtures.envelope(Array(fixes[0..<20]), session: session, install: install)
                let b = Fixtures.envelope(Array(fixes[10..<30]), session: session, install: install)
                let ra = try await store.ingest(IngestBatch(envelope: a, receivedAt: Self.now))
                let rb = try await store.ingest(IngestBatch(envelope: b, receivedAt: Self.now))
                #expect(ra.locationsStored == 20)
                #expect(rb.locationsStored == 10 && rb.locationsDuplicate == 10 && !rb.duplicateBatch)
                #expect(try await store.track(sessionId: session).map(\.location) == fixes)
            }
        }

        @Test(arguments: Backend.all)
        func concurrentReplaysStoreOnce(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let session = Fixtures.ids.next()
                let install = Fixtures.ids.next()
                let fixes = Fixtures.locations(200)
                // Ten batches, each overlapping its neighbours, each sent three times at once.
                let batches = (0..<10).map { i in
                    Fixtures.envelope(Array(fixes[(i * 18)..<min(200, i * 18 + 40)]), session: session, install: install)
                }
                let stored = try await withThrowingTaskGroup(of: Int.self) { group in
                    for e in batches + batches + batches {
                        group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)).locationsStored }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(stored == 200)
                #expect(try await store.track(sessionId: session).count == 200)
            }
        }

        @Test(arguments: Backend.all)
        func everyFieldAndNullRoundTripsAndEventsDedupeAcrossBatches(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let session = Fixtures.ids.next()
                let install = Fixtures.ids.next()
                // Every optional field both set and NULL, every enum value, ids out of order in the envelope.
                let triggers: [Trigger] = [.interval, .motion, .checkIn, .geofence, .manual]
                let motions: [Motion] = [.moving, .stationary, .unknown]
                let qualities: [Quality?] = [nil, .lowAccuracy, .implausibleSpeed]
                var fixes: [WireLocation] = []
                for i in 0..<1_000 {
                    let d = Double(i)
                    var l = WireLocation(
                        id: Fixtures.ids.next(), timestamp: WireTimestamp(millis: Fixtures.base + Int64(i) * 1_000),
                        latitude: -33.9 + d * 1e-5, longitude: 151.2 - d * 1e-5)
                    l.trigger = triggers[i % 5]
                    l.motion = motions[i % 3]
                    l.isMock = i % 7 == 0
                    l.accuracy = i % 2 == 0 ? nil : 3.25
                    l.speed = i % 3 == 0 ? nil : 0.5
                    l.bearing = i % 4 == 0 ? nil : 359.75
                    l.altitude = i % 5 == 0 ? nil : -12.5
                    l.activity = i % 6 == 0 ? nil : .cycling
                    l.quality = qualities[i % 3]
                    l.privacyZone = i % 8 == 0 ? "home" : nil
                    fixes.append(l)
                }
                // Every optional column of the fix table is both set and NULL above, so this round
                // trip covers a column added later (a case of FixColumn) once it is set here.
                for column in FixColumn.all {
                    let values = fixes.map { column.value(of: $0) }
                    func isNull(_ v: FixColumn.Value) -> Bool { v.real == nil && v.text == nil }
                    #expect(values.contains(where: isNull) && !values.allSatisfy(isNull), "\(column) is not both set and NULL")
                }
                let e1 = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "depot", type: .enter, timestamp: WireTimestamp(millis: Fixtures.base))
                let e2 = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "depot", type: .exit, timestamp: WireTimestamp(millis: Fixtures.base + 9_000))
                var a = Fixtures.envelope(Array(fixes[0..<600]).shuffled(), session: session, install: install, events: [e2, e1])
                a.device.model = nil
                let ra = try await store.ingest(IngestBatch(envelope: a, receivedAt: Self.now, principal: "api-key"))
                #expect(
                    ra
                        == IngestResult(
                            duplicateBatch: false, locationsStored: 600, locationsDuplicate: 0, eventsStored: 2, eventsDuplicate: 0))
                // A new batch repeating fixes and an event of the first, plus new ones; only the new ones are stored.
                let e3 = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "yard", type: .enter, timestamp: WireTimestamp(millis: Fixtures.base + 20_000))
                let b = Fixtures.envelope(Array(fixes[500..<1_000].reversed()), session: session, install: install, events: [e3, e1])
                let rb = try await store.ingest(IngestBatch(envelope: b, receivedAt: Self.now))
                #expect(
                    rb
                        == IngestResult(
                            duplicateBatch: false, locationsStored: 400, locationsDuplicate: 100, eventsStored: 1, eventsDuplicate: 1))
                // A batch of events only, and its replay.
                let c = Fixtures.envelope(
                    [], session: session, install: install,
                    events: [
                        WireGeofenceEvent(
                            id: Fixtures.ids.next(), geofenceId: "yard", type: .exit,
                            timestamp: WireTimestamp(millis: Fixtures.base + 30_000))
                    ])
                #expect(
                    try await store.ingest(IngestBatch(envelope: c, receivedAt: Self.now))
                        == IngestResult(
                            duplicateBatch: false, locationsStored: 0, locationsDuplicate: 0, eventsStored: 1, eventsDuplicate: 0))
                #expect(
                    try await store.ingest(IngestBatch(envelope: c, receivedAt: Self.now))
                        == IngestResult(
                            duplicateBatch: true, locationsStored: 0, locationsDuplicate: 0, eventsStored: 0, eventsDuplicate: 1))

                let track = try await store.track(sessionId: session)
                #expect(track.map(\.location) == fixes)
                #expect(track.filter { $0.batchId == a.batchId }.count == 600)
                let sessions = try await store.sessions(installId: install)
                #expect(sessions.count == 1 && sessions[0].fixCount == 1_000 && sessions[0].eventCount == 4)
                let devices = try await store.devices()
                #expect(devices.count == 1 && devices[0].fixCount == 1_000 && devices[0].lastFix?.location == fixes[999])
            }
        }

        @Test(arguments: Backend.all)
        func latestIsByFixTimeNotArrival(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let install = Fixtures.ids.next()
                let s1 = Fixtures.ids.next()
                let s2 = Fixtures.ids.next()
                let newer = Fixtures.locations(3, startMillis: Fixtures.base + 600_000)
                let older = Fixtures.locations(3, startMillis: Fixtures.base)
                _ = try await store.ingest(
                    IngestBatch(envelope: Fixtures.envelope(newer, session: s2, install: install), receivedAt: Self.now))
                // The older fixes arrive later (an offline catch-up).
                _ = try await store.ingest(
                    IngestBatch(
                        envelope: Fixtures.envelope(older, session: s1, install: install),
                        receivedAt: WireTimestamp(millis: Self.now.millis + 60_000)))
                let devices = try await store.devices()
                #expect(devices.count == 1)
                #expect(devices[0].lastFix?.location == newer[2])
                #expect(devices[0].fixCount == 6)
                #expect(devices[0].lastReceivedAt.millis == Self.now.millis + 60_000)
                let sessions = try await store.sessions(installId: install)
                #expect(sessions.map(\.sessionId) == [s2, s1])
                #expect(sessions[1].firstFixAt == older[0].timestamp && sessions[1].fixCount == 3)
                // Issue 28: the list is bounded in the database, newest first, and a window leaves out
                // a session with nothing in it before the limit is applied.
                #expect(try await store.sessions(installId: install, sinceMillis: nil, limit: 1).map(\.sessionId) == [s2])
                #expect(try await store.sessions(installId: install, sinceMillis: nil, limit: 5).map(\.sessionId) == [s2, s1])
                let windowed = try await store.sessions(installId: install, sinceMillis: newer[0].timestamp.millis, limit: 1)
                #expect(windowed.map(\.sessionId) == [s2] && windowed[0].fixCount == 3)
                let afterOlder = older[2].timestamp.millis + 1
                #expect(try await store.sessions(installId: install, sinceMillis: afterOlder, limit: 2).map(\.sessionId) == [s2])
                // BY-8, issue 32: what device status is judged from, for one device or all, agrees.
                let times = DeviceTimes(
                    installId: install, lastFixMillis: newer[2].timestamp.millis, lastContactMillis: Self.now.millis + 60_000,
                    expectedSeconds: nil)
                #expect(try await store.deviceTimes(installId: install) == [times])
                #expect(try await store.deviceTimes(installId: nil) == [times])
                #expect(try await store.deviceTimes(installId: Fixtures.ids.next()).isEmpty)
            }
        }

        @Test(arguments: Backend.all)
        func fixesArePagedInTimeOrderWithinRange(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let install = Fixtures.ids.next()
                let fixes = Fixtures.locations(25)
                // Same timestamp twice to exercise the (ts, id) tie-break.
                var twin = fixes[10]
                twin.id = Fixtures.ids.next()
                let all = fixes + [twin]
                _ = try await store.ingest(IngestBatch(envelope: Fixtures.envelope(all.shuffled(), install: install), receivedAt: Self.now))
                let from = fixes[5].timestamp
                let to = fixes[20].timestamp
                var got: [WireLocation] = []
                var query = FixQuery(installId: install, from: from, to: to, limit: 4)
                var pages = 0
                repeat {
                    let page = try await store.fixes(query)
                    got += page.fixes.map(\.location)
                    query.after = page.next
                    pages += 1
                } while query.after != nil && pages < 20
                let expected = all.filter { $0.timestamp >= from && $0.timestamp < to }
                    .sorted { ($0.timestamp.millis, $0.id.wireString) < ($1.timestamp.millis, $1.id.wireString) }
                #expect(got == expected)
                #expect(got.count == 16)
                #expect(pages == 4)
            }
        }

        @Test(arguments: Backend.all)
        func refreshTokensRotateWithGraceAndDetectReuse(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let tokens = TokenService(store: store.tokens, accessTTLSeconds: 60, refreshTTLSeconds: 3600)
                try await tokens.loadKey()
                let seed = try await tokens.issue(subject: "truck-7")
                #expect(tokens.verify(accessToken: seed.accessToken) == "truck-7")
                let second = try await tokens.refresh(seed.refreshToken)
                // The answer was lost: the device retries with the old token, which still works once.
                let third = try await tokens.refresh(seed.refreshToken)
                #expect(second.refreshToken != third.refreshToken)
                let fourth = try await tokens.refresh(third.refreshToken)
                #expect(tokens.verify(accessToken: fourth.accessToken) == "truck-7")
                // The successor the replay retired, presented, revokes the chain (issue 52).
                await #expect(throws: TokenError.self) { _ = try await tokens.refresh(second.refreshToken) }
                await #expect(throws: TokenError.self) { _ = try await tokens.refresh(fourth.refreshToken) }
                await #expect(throws: TokenError.self) { _ = try await tokens.refresh(seed.refreshToken) }
                await #expect(throws: TokenError.self) { _ = try await tokens.refresh("brt1.bogus") }
                // A second service on the same database shares the signing key.
                let other = TokenService(store: store.tokens, accessTTLSeconds: 60, refreshTTLSeconds: 3600)
                try await other.loadKey()
                #expect(other.verify(accessToken: fourth.accessToken) == "truck-7")
            }
        }
    }
}
