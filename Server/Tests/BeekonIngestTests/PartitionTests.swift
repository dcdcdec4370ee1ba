import BeekonTesting
import BeekonWire
import Foundation
import PostgresNIO
import PostgresTestCluster
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 32 item 4: PostgreSQL's `locations` partitioned by week of fix time, dedupe across
    /// partitions, retention by dropping partitions, and the hot reads still index scans that
    /// prune to the weeks they ask for. On the suite's real PostgreSQL cluster.
    @Suite(.tags(.postgres), .skippable(.postgres)) struct Partitions {
        static let week = LocationPartitions.weekMillis
        /// A Monday 00:00 UTC: the boundary between two weekly partitions.
        static let boundary = LocationPartitions.weekStart(Fixtures.base) + week
        static let minute: Int64 = 60_000

        static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

        /// A fresh database, a side connection to it and a migrated store whose services run for `body`.
        static func withDatabase(
            migrate: Bool = true,
            _ body: @escaping @Sendable (TestDatabase, PostgresLocationStore, PostgresConnection) async throws -> Void
        ) async throws {
            guard PostgresClusterTrait.current != nil else {
                #expect(PostgresCluster.skipped, "no PostgreSQL cluster")
                return
            }
            let db = try await Backend.postgres.freshDatabase()
            defer { db.remove() }
            guard case .postgres(let location) = db.location else { throw TestFailure("not PostgreSQL") }
            let store = PostgresLocationStore(location: location, operationTimeout: .seconds(testDatabaseTimeout), logger: testLogger)
            let side = try await PostgresConnection.side(to: location)
            do {
                // A bound on the whole test: under a CPU hog one of these once never returned
                // (the suite waited 20 min with its PostgreSQL backend idle), so a hang here is a
                // named failure instead of a stuck run.
                try await OperationTimeout.run(.seconds(600), onExpiry: { TestFailure("the partition test did not finish within 600 s") }) {
                    try await IngestServer.withServices(store.services, logger: testLogger) {
                        if migrate { try await store.migrate() }
                        try await body(db, store, side)
                    }
                }
            } catch {
                try? await side.close()
                throw error
            }
            try await side.close()
        }

        /// Every row of a query on the side connection.
        static func rows<T: PostgresDecodable & Sendable>(_ conn: PostgresConnection, _ sql: String, as: T.Type) async throws -> [T] {
            var out: [T] = []
            for try await v in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(T.self) { out.append(v) }
            return out
        }

        /// Where each fix is stored: partition name per fix id.
        static func placement(_ conn: PostgresConnection) async throws -> [UUID: String] {
            var out: [UUID: String] = [:]
            for try await (id, table) in try await conn.query(
                "SELECT id, tableoid::regclass::text FROM locations", logger: testLogger
            ).decode((UUID, String).self) { out[id] = table }
            return out
        }

        /// A query's plan as text (`EXPLAIN` of the store's own statement with its bindings).
        static func plan(_ conn: PostgresConnection, _ query: PostgresQuery) async throws -> String {
            var lines: [String] = []
            for try await line in try await conn.query(
                PostgresQuery(unsafeSQL: "EXPLAIN " + query.sql, binds: query.binds), logger: testLogger
            ).decode(String.self) { lines.append(line) }
            return lines.joined(separator: "\n")
        }

        /// The tables of `filled` that a plan reads by sequential scan.
        static func seqScans(_ plan: String, _ filled: Set<String>) -> [String] {
            filled.filter { plan.contains("Seq Scan on \($0) ") }.sorted()
        }

        /// Fixes at the given times (ids in time order, as the SDK's UUIDv7 would be).
        static func fixes(at times: [Int64]) -> [WireLocation] {
            times.map { Fixtures.locations(1, startMillis: $0)[0] }
        }

        /// Across a week boundary, over real HTTP with the server's clock injected: fixes on both
        /// sides land in their weekly partitions, the read API's track, fixes and last_fix read
        /// them back in order, a fix id sent again with a time on the other side is refused, the
        /// live log's sequence has no gap, and retention drops only the old week (a device whose
        /// fixes are all old keeps its newest one).
        @Test func fixesOnBothSidesOfABoundaryReadBackDedupeAndRetire() async throws {
            let b = Self.boundary
            let clock = TestClock(start: Self.date(b - 5 * Self.minute))
            try await withRouter(.postgres, now: { clock.now() }) { server, db in
                guard case .postgres(let location) = db.location else { throw TestFailure("not PostgreSQL") }
                let store = PostgresLocationStore(location: location, logger: testLogger)
                try await IngestServer.withServices(store.services, logger: testLogger) {
                    let side = try await PostgresConnection.side(to: location, id: 2)
                    defer { Task { try? await side.close() } }
                    // The server made last week, this week and the next two at start (its clock: before the boundary).
                    let names = try await Self.rows(
                        side,
                        """
                        SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                        WHERE i.inhparent = 'locations'::regclass ORDER BY 1
                        """, as: String.self)
                    let weeks = (-2...1).map { LocationPartitions.name(weekStarting: b + Int64($0) * Self.week) }
                    #expect(names == ["locations_default"] + weeks)

                    let install = Fixtures.ids.next()
                    let session = Fixtures.ids.next()
                    let before = Self.fixes(at: [b - 20 * Self.minute, b - 10 * Self.minute, b - 1])
                    let first = Fixtures.envelope(before, session: session, install: install)
                    #expect(try await HTTP.upload(server, first).status == 200)
                    clock.set(Self.date(b + 30 * Self.minute))
                    let after = Self.fixes(at: [b, b + 10 * Self.minute, b + 20 * Self.minute])
                    #expect(try await HTTP.upload(server, Fixtures.envelope(after, session: session, install: install)).status == 200)
                    // Another device, all its fixes before the boundary.
                    let other = Fixtures.ids.next()
                    let otherFixes = Self.fixes(at: [b - 3 * Self.week / 2, b - 50 * Self.minute])
                    #expect(try await HTTP.upload(server, Fixtures.envelope(otherFixes, install: other)).status == 200)

                    let placed = try await Self.placement(side)
                    let lastWeek = LocationPartitions.name(weekStarting: b - Self.week)
                    let thisWeek = LocationPartitions.name(weekStarting: b)
                    #expect(before.allSatisfy { placed[$0.id] == lastWeek })
                    #expect(after.allSatisfy { placed[$0.id] == thisWeek })
                    #expect(placed[otherFixes[0].id] == LocationPartitions.name(weekStarting: b - 2 * Self.week))

                    // Dedupe across the boundary: the same fix id with a time in the other week.
                    var moved = before[1]
                    moved = WireLocation(
                        id: moved.id, timestamp: WireTimestamp(millis: b + 5 * Self.minute), trigger: moved.trigger,
                        motion: moved.motion, latitude: moved.latitude, longitude: moved.longitude)
                    let again = try await HTTP.upload(server, Fixtures.envelope([moved], session: session, install: install)).json()
                    #expect(again["locations_stored"] as? Int == 0)
                    #expect(again["locations_duplicate"] as? Int == 1)
                    #expect(try await Self.placement(side).count == 8)

                    // The read API across the boundary.
                    let all = (before + after).map(\.id.wireString)
                    let track = try await server.send("GET", "/v1/sessions/\(session.wireString)/track").json()
                    let feature = try #require((track["features"] as? [[String: Any]])?.first)
                    let coordinates = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [[Double]])
                    #expect(coordinates.count == 6)
                    let window =
                        "from=\(WireTimestamp(millis: b - Self.week).description)&to=\(WireTimestamp(millis: b + Self.week).description)"
                    let page = try await server.send("GET", "/v1/devices/\(install.wireString)/fixes?\(window)").json()
                    #expect((page["fixes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == all)
                    let lastFixes = try await Self.lastFixes(server)
                    #expect(lastFixes[install.wireString] == after[2].id.wireString)
                    #expect(lastFixes[other.wireString] == otherFixes[1].id.wireString)

                    // The live log: one event per stored fix, consecutive sequence numbers (nothing failed).
                    let events = try await store.events(after: 0, limit: 100)
                    #expect(events.filter { $0.kind == .fix }.count == 8)  // (and the device-status events)
                    #expect(zip(events, events.dropFirst()).allSatisfy { $1.seq == $0.seq + 1 })
                    #expect(try await store.eventMarks().head == events.last?.seq)

                    // The overview tier has drawn the fixes retention is about to drop. The server's
                    // own rebuilder may hold a bucket (a try-lock: this rebuild then skips it), so
                    // rebuild until no bucket is left dirty, which is when that one has committed.
                    let deadline = ContinuousClock.now + .seconds(60)
                    let dirty = "SELECT count(*) FROM track_overview_buckets WHERE dirty > 0"
                    while true {
                        _ = try await store.rebuildOverview(limit: 1_000)
                        if try await Self.rows(side, dirty, as: Int64.self) == [0] || ContinuousClock.now >= deadline { break }
                        try await Task.sleep(for: .milliseconds(20))  // polling the other rebuilder's commit, bounded
                    }
                    let orphanPoints = """
                        SELECT count(*) FROM track_overview o WHERE NOT EXISTS (
                            SELECT 1 FROM locations l WHERE l.install_id = o.install_id AND l.ts = o.ts)
                        """
                    #expect(try await Self.rows(side, "SELECT count(*) FROM track_overview WHERE ts < \(b)", as: Int64.self) != [0])
                    #expect(try await Self.rows(side, orphanPoints, as: Int64.self) == [0])
                    // Retention (1 day, three days after the boundary): the weeks before it go.
                    let report = try await store.maintainPartitions(now: Self.date(b + 3 * 86_400_000), retentionDays: 1)
                    #expect(report.dropped == [LocationPartitions.name(weekStarting: b - 2 * Self.week), lastWeek])
                    #expect(report.created == [LocationPartitions.name(weekStarting: b + 2 * Self.week)])
                    #expect(report.keptNewest == 1)
                    let left = try await Self.placement(side)
                    #expect(Set(left.keys) == Set(after.map(\.id) + [otherFixes[1].id]))
                    #expect(left[otherFixes[1].id] == "locations_default")
                    let rest = try await server.send("GET", "/v1/devices/\(install.wireString)/fixes?\(window)").json()
                    #expect((rest["fixes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == after.map(\.id.wireString))
                    #expect(try await Self.lastFixes(server) == lastFixes)
                    // The dedupe keys of the dropped fixes went with them; the kept one's stays.
                    let ids = try await Self.rows(side, "SELECT id FROM location_ids", as: UUID.self)
                    #expect(Set(ids) == Set(left.keys))
                    // No simplified point of a dropped fix is left for the dashboard to draw.
                    #expect(try await Self.rows(side, orphanPoints, as: Int64.self) == [0])
                    // A second run changes nothing.
                    #expect(
                        try await store.maintainPartitions(now: Self.date(b + 3 * 86_400_000), retentionDays: 1)
                            == PartitionMaintenance())
                    // A newer fix of the other device: its kept old one falls due and goes.
                    clock.set(Self.date(b + 4 * 86_400_000))
                    let newer = Self.fixes(at: [b + 4 * 86_400_000 - Self.minute])
                    #expect(try await HTTP.upload(server, Fixtures.envelope(newer, install: other)).status == 200)
                    let later = try await store.maintainPartitions(now: Self.date(b + 4 * 86_400_000), retentionDays: 1)
                    #expect(later.dropped.isEmpty && later.keptNewest == 0)
                    #expect(try await Self.placement(side)[otherFixes[1].id] == nil)
                    #expect(try await Self.lastFixes(server)[other.wireString] == newer[0].id.wireString)
                }
            }
        }

        /// `last_fix` id per device from `GET /v1/devices`.
        static func lastFixes(_ server: some TestTransport) async throws -> [String: String] {
            let devices = try await server.send("GET", "/v1/devices").json()
            var out: [String: String] = [:]
            for d in devices["devices"] as? [[String: Any]] ?? [] {
                if let id = d["install_id"] as? String, let fix = (d["last_fix"] as? [String: Any])?["id"] as? String { out[id] = fix }
            }
            return out
        }

        /// A fix no weekly partition covers (a clock years ahead, an offline device's old fix) goes
        /// to the default partition; the week's partition, made later, takes it over.
        /// A viewer resuming from the live event log must not replay a fix retention dropped.
        @Test func theEventLogNeverOutlivesTheFixRetention() {
            var config = IngestConfiguration(database: .sqlite(path: "unused.sqlite"), authMode: .off)
            config.eventRetentionSeconds = 7 * 86_400
            #expect(config.effectiveEventRetentionSeconds == 7 * 86_400)
            config.retentionDays = 2
            #expect(config.effectiveEventRetentionSeconds == 2 * 86_400)
            config.retentionDays = 30
            #expect(config.effectiveEventRetentionSeconds == 7 * 86_400)
        }

        @Test func theDefaultPartitionTakesAnyTimeAndAWeekMadeLaterTakesItsRows() async throws {
            try await Self.withDatabase { _, store, side in
                let far = Self.boundary + 200 * Self.week + 5 * Self.minute
                let e = Fixtures.envelope(Self.fixes(at: [far, 0]))
                #expect(try await store.ingest(IngestBatch(envelope: e, receivedAt: WireTimestamp(millis: far))).locationsStored == 2)
                #expect(try await Self.placement(side).values.sorted() == ["locations_default", "locations_default"])
                let report = try await store.maintainPartitions(now: Self.date(far), retentionDays: nil)
                let week = LocationPartitions.name(weekStarting: LocationPartitions.weekStart(far))
                #expect(report.created.contains(week))
                #expect(try await Self.placement(side)[e.locations[0].id] == week)
                #expect(try await Self.placement(side)[e.locations[1].id] == "locations_default")
                #expect(try await store.track(sessionId: e.sessionId).map(\.location.id) == [e.locations[1].id, e.locations[0].id])
            }
        }

        /// The migration converts an existing unpartitioned table (schema 9) in place: every fix
        /// stays readable, the old table becomes the partition of all times up to the end of its
        /// newest fix's week, a fix dated in the future moves to the default partition, and the
        /// old fixes' ids still refuse duplicates.
        @Test func migrationTenConvertsAnExistingTable() async throws {
            try await Self.withDatabase(migrate: false) { _, store, side in
                try await side.query("CREATE TABLE beekon_schema (version INT PRIMARY KEY)", logger: testLogger)
                for (version, statements) in PostgresSchema.versions where version < 10 {
                    for s in statements { try await side.query(PostgresQuery(unsafeSQL: s), logger: testLogger) }
                    try await side.query("INSERT INTO beekon_schema (version) VALUES (\(version))", logger: testLogger)
                }
                // Written by the schema-9 statement (its ON CONFLICT (id) needs the old primary key).
                // The migration reads the database's clock.
                let now = try await Self.rows(side, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8", as: Int64.self)[0]
                let old = Fixtures.envelope(Self.fixes(at: [Fixtures.base, Fixtures.base + Self.minute]))
                let future = Fixtures.envelope(Self.fixes(at: [now + 100 * Self.week]))
                for e in [old, future] {
                    for (i, l) in e.locations.enumerated() {
                        try await side.query(
                            """
                            INSERT INTO locations (id, install_id, session_id, batch_id, ts, latitude, longitude, trigger, motion,
                                                   is_mock, received_at)
                            VALUES (\(l.id), \(e.device.installId), \(e.sessionId), \(e.batchId), \(l.timestamp.millis),
                                    \(l.latitude + Double(i)), \(l.longitude), 'interval', 'moving', false, \(l.timestamp.millis))
                            """, logger: testLogger)
                    }
                }
                try await store.migrate()
                let placed = try await Self.placement(side)
                #expect(old.locations.allSatisfy { placed[$0.id] == "locations_legacy" })
                #expect(placed[future.locations[0].id] == "locations_default")
                let bound = try await Self.rows(
                    side, "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE relname = 'locations_legacy'", as: String.self)
                let legacy = try #require(LocationPartitions.partition(name: "locations_legacy", bound: bound.first ?? ""))
                #expect(legacy.from == nil && legacy.to == LocationPartitions.weekStart(Fixtures.base + Self.minute) + Self.week)
                #expect(try await store.track(sessionId: old.sessionId).count == 2)
                // The old ids refuse a duplicate, even dated in another week.
                let copy = Fixtures.envelope(
                    [
                        WireLocation(
                            id: old.locations[0].id, timestamp: WireTimestamp(millis: now), trigger: .interval, motion: .moving,
                            latitude: 1, longitude: 2)
                    ], install: old.device.installId)
                let r = try await store.ingest(IngestBatch(envelope: copy, receivedAt: WireTimestamp(millis: now)))
                #expect(r.locationsStored == 0 && r.locationsDuplicate == 1)
                // Maintenance leaves the old table's range alone and makes the weeks after it.
                let report = try await store.maintainPartitions(now: Self.date(now), retentionDays: nil)
                #expect(report.created.count == 4)
                #expect(try await Self.placement(side).count == 3)
            }
        }

        /// The hot reads stay index scans and prune to the weeks they ask for: the read API's
        /// fixes window (and the dashboard's raw window) one week only, the track and last-fix
        /// reads by index on every week, the dedupe check by `location_ids`' key, the live
        /// stream's read by the event log's key. Enough rows (and ANALYZE) that the planner's
        /// choice means something.
        @Test func hotQueriesPruneAndUseIndexes() async throws {
            try await Self.withDatabase { _, store, side in
                let b = Self.boundary
                _ = try await store.maintainPartitions(now: Self.date(b), retentionDays: nil)
                // 60,000 fixes of 200 devices over three weeks, from six days before last week (the
                // default partition's, as an offline device's would be) into this week.
                try await side.query(
                    """
                    INSERT INTO locations (id, install_id, session_id, batch_id, ts, latitude, longitude, trigger, motion,
                                           is_mock, received_at)
                    SELECT gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((g % 200)::text, 12, '0'))::uuid,
                           ('00000000-0000-4000-9000-' || lpad((g % 400)::text, 12, '0'))::uuid, gen_random_uuid(),
                           \(b - Self.week - 6 * 86_400_000) + g * 30000, 52.5, 13.4, 'interval', 'moving', false,
                           \(b - Self.week - 6 * 86_400_000) + g * 30000
                    FROM generate_series(0, 59999) g
                    """, logger: testLogger)
                try await side.query(
                    "INSERT INTO events (kind, install_id, ts, received_at, payload) SELECT 'fix', gen_random_uuid(), g, g, '{}' FROM generate_series(1, 20000) g",
                    logger: testLogger)
                try await side.query("ANALYZE", logger: testLogger)
                // An empty partition is read by a (free) sequential scan; one holding rows must not be.
                let filled = Set(try await Self.rows(side, "SELECT DISTINCT tableoid::regclass::text FROM locations", as: String.self))
                let install = UUID(uuidString: "00000000-0000-4000-8000-000000000007")!
                let session = UUID(uuidString: "00000000-0000-4000-9000-000000000007")!
                let thisWeek = LocationPartitions.name(weekStarting: b)
                let lastWeek = LocationPartitions.name(weekStarting: b - Self.week)

                let window = try await Self.plan(
                    side,
                    PostgresLocationStore.fixesQuery(
                        FixQuery(
                            installId: install, from: WireTimestamp(millis: b + Self.minute),
                            to: WireTimestamp(millis: b + 86_400_000), limit: 100)))
                #expect(
                    window.contains("Index Scan on \(thisWeek)_install_id_ts_id_idx")
                        || window.contains("Index Scan using \(thisWeek)_install_id_ts_id_idx"), "\(window)")
                #expect(
                    !window.contains(lastWeek) && !window.contains("locations_default") && Self.seqScans(window, filled).isEmpty,
                    "\(window)")

                let last = try await Self.plan(side, PostgresLocationStore.lastFixQuery(install))
                #expect(last.contains("Index Scan Backward using \(thisWeek)_install_id_ts_id_idx"), "\(last)")
                #expect(last.contains("Index Scan Backward using \(lastWeek)_install_id_ts_id_idx"), "\(last)")
                #expect(Self.seqScans(last, filled).isEmpty, "\(last)")

                let track = try await Self.plan(
                    side, PostgresLocationStore.trackQuery(TrackQuery(sessionId: session, sinceMillis: b, limit: 100)))
                #expect(
                    track.contains("Index Scan on \(thisWeek)_session_id_ts_id_idx")
                        || track.contains("Index Scan using \(thisWeek)_session_id_ts_id_idx"), "\(track)")
                #expect(!track.contains(lastWeek) && Self.seqScans(track, filled).isEmpty, "\(track)")

                let dedupe = try await Self.plan(
                    side, "SELECT count(*) FROM location_ids WHERE install_id = \(install) AND id = ANY(\([Fixtures.ids.next()]))")
                #expect(dedupe.contains("location_ids_pkey") && !dedupe.contains("Seq Scan"), "\(dedupe)")

                let live = try await Self.plan(
                    side, "SELECT seq, kind, install_id, ts, payload FROM events WHERE seq > \(Int64(19_000)) ORDER BY seq LIMIT \(100)")
                #expect(live.contains("events_pkey") && !live.contains("Seq Scan"), "\(live)")
            }
        }
    }
}
