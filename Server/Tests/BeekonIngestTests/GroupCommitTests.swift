import BeekonPrimitives
import BeekonWire
import Foundation
import GRDB
import PostgresNIO
import PostgresTestCluster
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 32: group commit on SQLite — uploads that arrive while a commit is flushing share
    /// the next transaction; dedupe, 2xx-only-after-commit and per-upload errors stay.
    @Suite struct GroupCommitSQLite {
        static let now = WireTimestamp(millis: Fixtures.base + 3_600_000)
        /// A latitude that the injected trigger refuses (a store-side failure of one batch).
        static let poison = -89.125

        /// Seven uploads queue while the writer is blocked; they commit as one group in which
        /// one batch fails: it alone gets the error and stores nothing, its neighbours are stored.
        @Test func oneBadBatchInAGroupFailsAloneAndTheRestCommitTogether() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            // The first upload waits on the test's held lock while the test queues the rest: a busy
            // timeout far above the store's 10 s, so a starved test cannot turn the wait into SQLITE_BUSY.
            let store = try SQLiteLocationStore(path: path, busyTimeout: 600, logger: testLogger)
            try await store.migrate()
            // A second connection: the fault (a trigger refusing one latitude) and a held write lock.
            let other = try DatabaseQueue(path: path)
            try await other.write { db in
                try db.execute(
                    sql: """
                        CREATE TRIGGER refuse_poison BEFORE INSERT ON locations WHEN NEW.latitude = \(Self.poison)
                        BEGIN SELECT RAISE(ABORT, 'injected failure'); END
                        """)
            }
            let release = await Self.holdWriteLock(other)

            var bad = Fixtures.envelope(Fixtures.locations(3))
            bad.locations[1].latitude = Self.poison
            let first = Fixtures.envelope(Fixtures.locations(2))
            let good = (0..<6).map { _ in Fixtures.envelope(Fixtures.locations(4)) }
            let outcomes = try await withThrowingTaskGroup(of: (UUID, Bool).self) { group in
                // The first upload takes the writer and waits on the held lock …
                group.addTask { (first.batchId, (try? await store.ingest(IngestBatch(envelope: first, receivedAt: Self.now))) != nil) }
                try await Self.until { store.groupCommitCounts.groups == 1 }
                // … while the other seven queue for the next group.
                for e in good + [bad] {
                    group.addTask { (e.batchId, (try? await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now))) != nil) }
                }
                try await Self.until { store.groupCommitCounts.waiting == 7 }
                release()
                var out: [UUID: Bool] = [:]
                for try await (id, ok) in group { out[id] = ok }
                return out
            }
            #expect(store.groupCommitCounts == GroupCommitCounts(groups: 2, uploads: 8, waiting: 0))
            #expect(outcomes[bad.batchId] == false)
            for e in good + [first] {
                #expect(outcomes[e.batchId] == true)
                #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations)
            }
            #expect(try await store.track(sessionId: bad.sessionId).isEmpty)
            // The failed batch left no batch row: sent again once the fault is gone, it is stored.
            try await other.write { db in try db.execute(sql: "DROP TRIGGER refuse_poison") }
            let retry = try await store.ingest(IngestBatch(envelope: bad, receivedAt: Self.now))
            #expect(!retry.duplicateBatch && retry.locationsStored == 3)
            // Dedupe across groups: every batch again, concurrently, stores nothing.
            try await withThrowingTaskGroup(of: IngestResult.self) { group in
                for e in good + [first, bad] { group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) } }
                for try await r in group { #expect(r.duplicateBatch && r.locationsStored == 0) }
            }
        }

        /// The switch: without group commit every upload is its own transaction.
        @Test func offMeansOneTransactionPerUpload() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            let store = try SQLiteLocationStore(path: path, groupCommit: false, logger: testLogger)
            try await store.migrate()
            let e = Fixtures.envelope(Fixtures.locations(3))
            #expect(try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)).locationsStored == 3)
            #expect(store.groupCommitCounts == GroupCommitCounts(groups: 0, uploads: 0, waiting: 0))
        }

        /// The writer's page cache holds a large group's dirty pages until the commit (issue 32:
        /// at SQLite's 2 MiB default a group from 1,000 devices spilled pages to the WAL
        /// mid-transaction); the readers keep the default, so the bound is one connection's.
        @Test func theWriterAloneHasTheLargePageCache() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            try await store.migrate()
            let writer = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
            let reader = try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
            #expect(writer == -SQLiteLocationStore.writerCacheKiB)
            #expect(reader == -2_000)
        }

        /// The writer keeps its statement journals in memory (`temp_store` 2, issue 32: spilled
        /// to a temporary file they were 30 % of its time), and a group takes no savepoint, so
        /// that journal never holds more than one statement's pages; the readers keep the default.
        @Test func theWriterJournalsInMemoryAndAGroupTakesNoSavepoint() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let store = try SQLiteLocationStore(path: try db.sqlitePath, logger: testLogger)
            try await store.migrate()
            #expect(try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 2)
            #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 0)
            let statements = Locked<[String]>([])
            try await store.pool.writeWithoutTransaction { db in
                db.trace { event in statements.withLock { $0.append("\(event)") } }
            }
            try await withThrowingTaskGroup(of: IngestResult.self) { group in
                for _ in 0..<6 {
                    let e = Fixtures.envelope(Fixtures.locations(3))
                    group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) }
                }
                for try await r in group { #expect(r.locationsStored == 3) }
            }
            let seen = statements.value
            #expect(seen.contains { $0.hasPrefix("INSERT INTO locations") })
            #expect(!seen.contains { $0.uppercased().contains("SAVEPOINT") })
        }

        /// The multi-row inserts bind their values straight onto the statement (issue 32): rows
        /// past one statement's 64 come back from `RETURNING` in full, with or without it a value of
        /// every storage class reads back as bound, and a row of the wrong width is a clear error
        /// that leaves nothing behind, never a shifted binding.
        @Test func rawBoundInsertsRoundTripAndAWrongWidthIsAnError() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let store = try SQLiteLocationStore(path: try db.sqlitePath, logger: testLogger)
            try await store.migrate()
            let rows: [[DatabaseValue]] = (0..<150).map { (i: Int) -> [DatabaseValue] in
                let text: DatabaseValue = i % 2 == 0 ? .null : "é\(i)".databaseValue
                let blob: DatabaseValue = Data([UInt8(i % 256), 0]).databaseValue
                return ["k\(i)".databaseValue, Int64(i).databaseValue, (Double(i) / 4).databaseValue, text, blob]
            }
            let returned = try await store.pool.write { db in
                try db.execute(sql: "CREATE TABLE scratch (k TEXT PRIMARY KEY, i INTEGER, d REAL, t TEXT, b BLOB)")
                try db.execute(sql: "CREATE TABLE plain (k TEXT PRIMARY KEY, i INTEGER, d REAL, t TEXT, b BLOB)")
                try SQLiteLocationStore.insertRows(db, "INSERT INTO plain (k, i, d, t, b)", rows, "")
                return try SQLiteLocationStore.insertRows(db, "INSERT INTO scratch (k, i, d, t, b)", rows, "RETURNING k")
            }
            // SQLite does not promise an order for RETURNING rows; the store uses them as a set.
            #expect(returned.count == 150 && Set(returned) == Set((0..<150).map { "k\($0)" }))
            for table in ["scratch", "plain"] {
                let back = try await store.pool.read { db in
                    try Row.fetchAll(db, sql: "SELECT k, i, d, t, b FROM \(table) ORDER BY i").map { Array($0.databaseValues) }
                }
                #expect(back == rows, "\(table)")
            }
            await #expect(throws: DatabaseError.self) {
                try await store.pool.write { db in
                    try SQLiteLocationStore.insertRows(
                        db, "INSERT INTO scratch (k, i, d, t, b)", [rows[0].map { _ in "x".databaseValue }, ["y".databaseValue]], "")
                }
            }
            #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM scratch") } == 150)
        }

        /// A group is folded (one multi-row insert per table, issue 32): eleven uploads queue in a
        /// known order behind a held write lock and commit as one transaction, and each still gets
        /// exactly its own answer, as if they had been stored one after the other: one already
        /// stored (a duplicate), one whose fixes are partly stored, two new batches sharing a fix
        /// (the first to arrive stores it), one with geofence events, uploads of sizes 1 to 6, and
        /// one batch sent twice in the group (the second copy is a duplicate). The live log holds
        /// one event per stored row in arrival order; every new fix's bucket is marked stale;
        /// the writer's metrics count the one transaction.
        @Test func aFoldedGroupAnswersEachUploadWithItsOwnCounts() async throws {
            try await Self.withStore { store, other in
                let (stored, partly, shared, a, b, withEvents, sized) = FoldedGroup.make()
                #expect(try await store.ingest(IngestBatch(envelope: stored, receivedAt: Self.now)).locationsStored == 3)
                let first = Fixtures.envelope(Fixtures.locations(2))
                // `b` arrives before `a`, so `b` stores the shared fix.
                let rest = [stored, partly, b, a, withEvents] + sized + [sized[2]]
                let release = await Self.holdWriteLock(other)
                let r = try await withThrowingTaskGroup(of: (Int, IngestResult?).self) { group in
                    group.addTask { (-1, try? await store.ingest(IngestBatch(envelope: first, receivedAt: Self.now))) }
                    try await Self.until { store.groupCommitCounts.groups == 2 }
                    for (i, e) in rest.enumerated() {
                        group.addTask { (i, try? await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now))) }
                        try await Self.until { store.groupCommitCounts.waiting == i + 1 }  // arrival order is `rest`'s
                    }
                    release()
                    var out = [IngestResult?](repeating: nil, count: rest.count)
                    for try await (i, result) in group where i >= 0 { out[i] = result }
                    return try out.map { try #require($0) }
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 3, uploads: 14, waiting: 0))
                #expect(r[0].duplicateBatch && r[0].locationsStored == 0 && r[0].locationsDuplicate == 3)
                #expect(!r[1].duplicateBatch && r[1].locationsStored == 4 && r[1].locationsDuplicate == 2)
                #expect(!r[2].duplicateBatch && r[2].locationsStored == 3 && r[2].locationsDuplicate == 0)
                #expect(!r[3].duplicateBatch && r[3].locationsStored == 5 && r[3].locationsDuplicate == 1)
                #expect(r[4].locationsStored == 1 && r[4].eventsStored == 3 && r[4].eventsDuplicate == 0)
                for (i, result) in r[5..<11].enumerated() {
                    #expect(!result.duplicateBatch && result.locationsStored == i + 1 && result.eventsStored == 0)
                }
                #expect(r[11].duplicateBatch && r[11].locationsStored == 0 && r[11].locationsDuplicate == 3)
                // One transaction for the whole group, as the writer's metrics count it.
                let timings = store.writerTimings
                #expect(timings.transactions == 3 && timings.uploads == 14 && timings.statementSeconds > 0)
                #expect(store.writerMetricsText.contains("beekon_ingest_writer_uploads_total 14\n"))
                let (fixes, owner, stale) = try await other.read { db in
                    (
                        try Int.fetchOne(db, sql: "SELECT count(*) FROM locations"),
                        try String.fetchOne(db, sql: "SELECT batch_id FROM locations WHERE id = ?", arguments: [shared.id.wireString]),
                        try Int.fetchOne(db, sql: "SELECT count(DISTINCT install_id) FROM track_overview_buckets WHERE dirty > 0")
                    )
                }
                #expect(fixes == 39)  // 3 + 2 + 4 + 3 + 5 + 1 + (1 + 2 + … + 6)
                #expect(owner == b.batchId.wireString)
                #expect(stale == 12)  // every install with a new fix
                // Each session holds what its upload was answered with (the shared fix is `b`'s, two of `partly`'s are `stored`'s).
                for (e, n) in zip([first, partly, b, a, withEvents] + sized, [2] + r[1..<11].map(\.locationsStored)) {
                    #expect(try await store.track(sessionId: e.sessionId).count == n)
                }
                // The live log: one event per stored row, each upload's together, in arrival order.
                let events = try await store.events(after: 0, limit: 1_000)
                #expect(events.count == 39 + 3)  // every fix and the 3 geofence events
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.seq < $1.seq })
                let order =
                    [(stored, 3), (first, 2), (partly, 4), (b, 3), (a, 5), (withEvents, 4)]
                    + sized.map { ($0, $0.locations.count) }
                #expect(events.map(\.installId) == order.flatMap { Array(repeating: $0.0.device.installId, count: $0.1) })
                // Everything again (another group): nothing is stored.
                try await withThrowingTaskGroup(of: IngestResult.self) { group in
                    for e in rest + [first] { group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) } }
                    for try await result in group { #expect(result.duplicateBatch && result.locationsStored == 0) }
                }
                #expect(try await store.events(after: 0, limit: 1_000).count == events.count)
            }
        }

        /// The binding read every upload makes runs inline on a read-only connection of its own
        /// (issue 32: the pool's async read was four thread hand-offs per upload). It is a WAL
        /// reader: a write transaction held open on another connection neither blocks it nor
        /// shows it uncommitted rows, and once that transaction commits a revocation, the very
        /// next read sees it (IN-5: a revoked credential is refused at once).
        @Test func theInlineBindingReadNeitherWaitsForTheWriterNorMissesACommittedRevocation() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            // A read that waited for the held write lock would fail after this timeout, not hang.
            let store = try SQLiteLocationStore(path: path, busyTimeout: 5, logger: testLogger)
            try await store.migrate()
            let install = Fixtures.ids.next()
            let bound = try await store.deviceBinding(subject: "device-1", claim: install, nowMillis: Fixtures.base)
            #expect(bound == DeviceBinding(installId: install, revoked: false))
            // The binding is read on the inline connection, not through the pool.
            let inline = Locked<[String]>([])
            store.inlineReader.inDatabase { db in db.trace { event in inline.withLock { $0.append("\(event)") } } }

            var config = Configuration()
            config.busyMode = .timeout(60)
            let other = try DatabaseQueue(path: path, configuration: config)
            let release = DispatchSemaphore(value: 0)
            let (committed, commit) = AsyncStream<Void>.makeStream()
            await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
                Thread {
                    // Resumed once whatever happens: a failed revocation fails the last #expect, never hangs.
                    var resumed = false
                    try? other.inTransaction(.immediate) { db in
                        try db.execute(sql: "UPDATE device_bindings SET revoked_at = 1 WHERE subject = 'device-1'")
                        resumed = true
                        held.resume()
                        release.wait()
                        return .commit
                    }
                    if !resumed { held.resume() }
                    commit.yield()
                    commit.finish()
                }.start()
            }
            defer { release.signal() }
            let during = try await store.deviceBinding(subject: "device-1", claim: install, nowMillis: Fixtures.base)
            #expect(during == DeviceBinding(installId: install, revoked: false), "the held revocation is not committed yet")
            #expect(inline.value.contains { $0.contains("FROM device_bindings WHERE subject") }, "read inline")
            release.signal()
            for await _ in committed {}
            let after = try await store.deviceBinding(subject: "device-1", claim: install, nowMillis: Fixtures.base)
            #expect(after == DeviceBinding(installId: install, revoked: true), "the committed revocation is seen by the next read")
        }

        /// A locked file never puts the inline read to sleep on a thread of Swift's shared pool:
        /// `SQLITE_BUSY` and `SQLITE_LOCKED` (any extended code) send it through the pool, which
        /// waits on threads of its own; any other failure is the read's own error.
        @Test func onlyALockedFileSendsTheInlineReadThroughThePool() {
            #expect(SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_BUSY)))
            #expect(SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_BUSY_RECOVERY)))
            #expect(SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_BUSY_SNAPSHOT)))
            #expect(SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_LOCKED)))
            #expect(!SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_CORRUPT)))
            #expect(!SQLiteLocationStore.isBusy(DatabaseError(resultCode: .SQLITE_ERROR)))
            #expect(!SQLiteLocationStore.isBusy(StoreError.unavailable("not a database error")))
        }

        /// A migrated SQLite store with group commit on a fresh file, and a second connection to it.
        static func withStore(_ body: (SQLiteLocationStore, DatabaseQueue) async throws -> Void) async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let path = try db.sqlitePath
            // The first upload waits on the test's held lock while the test queues the rest: a busy
            // timeout far above the store's 10 s, so a starved test cannot turn the wait into SQLITE_BUSY.
            let store = try SQLiteLocationStore(path: path, busyTimeout: 600, logger: testLogger)
            try await store.migrate()
            try await body(store, try DatabaseQueue(path: path))
        }

        /// Takes the write lock on `other`'s connection and holds it, on a thread of its own,
        /// until the returned function is called.
        static func holdWriteLock(_ other: DatabaseQueue) async -> @Sendable () -> Void {
            let release = DispatchSemaphore(value: 0)
            await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
                Thread {
                    try? other.writeWithoutTransaction { db in
                        try db.execute(sql: "BEGIN IMMEDIATE")
                        held.resume()
                        release.wait()
                        try db.execute(sql: "COMMIT")
                    }
                }.start()
            }
            return { release.signal() }
        }

        /// Polls `condition` (a counter of the store), bounded by a generous deadline.
        static func until(_ condition: () -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition() {
                guard ContinuousClock.now < deadline else { throw StoreError.unavailable("condition not reached within 60 s") }
                try await Task.sleep(for: .milliseconds(5))  // polling the store's counter, bounded by the deadline
            }
        }
    }
}

extension Ingest {
    /// Issue 32: group commit on PostgreSQL — the same gathering as SQLite's; a group is one
    /// statement (one multi-row insert per table); dedupe, 2xx-only-after-commit and per-upload
    /// errors stay; a lost connection acknowledges nothing of its group.
    @Suite(.tags(.postgres), .skippable(.postgres)) struct GroupCommitPostgres {
        static let now = WireTimestamp(millis: Fixtures.base + 3_600_000)
        /// The event log's advisory lock (`PostgresIngestStatement`): a test that holds it stops
        /// the writer inside its transaction, after its rows are written and before its commit.
        static let eventLock = 74_657_002

        /// A migrated store with group commit on a fresh database, a side connection to that
        /// database, and the store's services running for `body`.
        static func withStore(
            groupCommit: Bool = true, operationTimeout: Int = testDatabaseTimeout,
            _ body: @Sendable (PostgresLocationStore, PostgresConnection) async throws -> Void
        ) async throws {
            guard PostgresClusterTrait.current != nil else {
                #expect(PostgresCluster.skipped, "no PostgreSQL cluster")
                return
            }
            let db = try await Backend.postgres.freshDatabase()
            guard case .postgres(let location) = db.location else { throw TestFailure("not PostgreSQL") }
            let store = PostgresLocationStore(
                location: location, operationTimeout: .seconds(operationTimeout), groupCommit: groupCommit, logger: testLogger)
            let side = try await PostgresConnection.side(to: location)
            do {
                try await IngestServer.withServices(store.services, logger: testLogger) {
                    try await store.migrate()
                    try await body(store, side)
                }
            } catch {
                try? await side.close()
                throw error
            }
            try await side.close()
        }

        /// One value of a one-row, one-column query on the side connection.
        static func value<T: PostgresDecodable & Sendable>(_ conn: PostgresConnection, _ sql: String, as: T.Type) async throws -> T {
            for try await v in try await conn.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(T.self) { return v }
            throw TestFailure("no row for \(sql)")
        }

        /// A `pg_locks` row of a backend waiting for the event log's lock in this test's database
        /// (the view is cluster-wide; other tests' databases have writers too).
        static let waiterOfThisDatabase = """
            locktype = 'advisory' AND NOT granted AND objid = \(eventLock)
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """

        /// Backends waiting for the event log's lock (the writer's, while the test holds it).
        static func waitingForTheLock(_ conn: PostgresConnection) async throws -> Int {
            Int(
                try await value(
                    conn,
                    """
                    SELECT count(*)::int8 FROM pg_locks WHERE \(waiterOfThisDatabase)
                    """, as: Int64.self))
        }

        /// Sends every envelope concurrently; the first alone (it becomes a group of one that
        /// waits on the held lock), the rest once it is waiting, so they queue as the next group.
        /// `whileQueued` runs once they all wait; returns each upload's outcome by position.
        static func send(
            _ store: PostgresLocationStore, first: WireEnvelope, then rest: [WireEnvelope],
            whileQueued: @Sendable () async throws -> Void
        ) async throws -> (first: Result<IngestResult, StoreError>, rest: [Result<IngestResult, StoreError>]) {
            let now = Self.now
            return try await withThrowingTaskGroup(of: (Int, Result<IngestResult, StoreError>).self) { group in
                let before = store.groupCommitCounts.groups
                group.addTask {
                    (-1, await Self.outcome(store, first, now))
                }
                try await GroupCommitSQLite.until { store.groupCommitCounts.groups == before + 1 }
                for (i, e) in rest.enumerated() {
                    group.addTask {
                        (i, await Self.outcome(store, e, now))
                    }
                }
                try await GroupCommitSQLite.until { store.groupCommitCounts.waiting == rest.count }
                try await whileQueued()
                var firstOutcome: Result<IngestResult, StoreError> = .failure(.queryFailed("no answer"))
                var outcomes = [Result<IngestResult, StoreError>](repeating: .failure(.queryFailed("no answer")), count: rest.count)
                for try await (i, outcome) in group {
                    if i < 0 { firstOutcome = outcome } else { outcomes[i] = outcome }
                }
                return (firstOutcome, outcomes)
            }
        }

        /// One upload's answer.
        static func outcome(_ store: PostgresLocationStore, _ e: WireEnvelope, _ now: WireTimestamp) async -> Result<
            IngestResult, StoreError
        > {
            do throws(StoreError) {
                return .success(try await store.ingest(IngestBatch(envelope: e, receivedAt: now)))
            } catch {
                return .failure(error)
            }
        }

        /// Sixteen uploads (one of them twice) queue behind a writer held inside its
        /// transaction, then commit as one group: one transaction id on every batch row, each
        /// upload answered with its own counts, the in-group duplicate stored once, the live log
        /// one event per stored fix in order; sent again (another group), nothing is stored.
        @Test func manyUploadsCommitAsOneTransactionAndDuplicatesAreStoredOnce() async throws {
            try await Self.withStore { store, side in
                try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(\(Self.eventLock))"), logger: testLogger)
                let first = Fixtures.envelope(Fixtures.locations(2))
                let good = (0..<15).map { _ in Fixtures.envelope(Fixtures.locations(10)) }
                let twice = good[3]
                let rest = good + [twice]
                let (firstOutcome, outcomes) = try await Self.send(store, first: first, then: rest) {
                    try await Self.until { try await Self.waitingForTheLock(side) == 1 }
                    try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(Self.eventLock))"), logger: testLogger)
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 2, uploads: 17, waiting: 0))
                #expect(try firstOutcome.get().locationsStored == 2)
                let results = try outcomes.map { try $0.get() }
                // The batch sent twice in one group: one upload stored it, the other found it stored.
                let twiceResults = [results[3], results[15]]
                #expect(twiceResults.filter(\.duplicateBatch).count == 1)
                #expect(twiceResults.map(\.locationsStored).sorted() == [0, 10])
                for (i, r) in results.enumerated() where i != 3 && i != 15 {
                    #expect(!r.duplicateBatch && r.locationsStored == 10 && r.locationsDuplicate == 0)
                }
                // One transaction for the whole second group.
                let ids = good.map { "'\($0.batchId.wireString)'" }.joined(separator: ",")
                #expect(
                    try await Self.value(
                        side, "SELECT count(DISTINCT xmin::text)::int8 FROM batches WHERE batch_id IN (\(ids))", as: Int64.self) == 1)
                for e in good + [first] {
                    #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations)
                }
                // The live log: one event per stored fix, in increasing sequence, all visible.
                let events = try await store.events(after: 0, limit: 1_000)
                #expect(events.count == 2 + 15 * 10)
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.seq < $1.seq })
                #expect(try await store.eventMarks().head == events.last?.seq)
                // Dedupe across groups: everything again, concurrently, stores nothing.
                try await withThrowingTaskGroup(of: IngestResult.self) { group in
                    for e in rest + [first] { group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) } }
                    for try await r in group { #expect(r.duplicateBatch && r.locationsStored == 0) }
                }
                #expect(try await store.events(after: 0, limit: 1_000).count == events.count)
            }
        }

        /// A group is folded into one statement (one multi-row insert per table); each upload
        /// still gets exactly its own answer: uploads of different sizes, one with geofence
        /// events, one already stored (a duplicate), one whose fixes are partly stored already,
        /// and two new batches sharing a fix (the first in (install, batch) order stores it, as
        /// one after the other would). The live log holds one event per stored row, in order.
        @Test func aFoldedGroupAnswersEachUploadWithItsOwnCounts() async throws {
            try await Self.withStore { store, side in
                let (stored, partly, shared, a, b, withEvents, sized) = FoldedGroup.make()
                // Fixture ids grow, so `a`'s install sorts before `b`'s.
                #expect(try await store.ingest(IngestBatch(envelope: stored, receivedAt: Self.now)).locationsStored == 3)
                try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(\(Self.eventLock))"), logger: testLogger)
                let first = Fixtures.envelope(Fixtures.locations(2))
                let rest = [stored, partly, a, b, withEvents] + sized
                let (firstOutcome, outcomes) = try await Self.send(store, first: first, then: rest) {
                    try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(Self.eventLock))"), logger: testLogger)
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 3, uploads: 13, waiting: 0))
                #expect(try firstOutcome.get().locationsStored == 2)
                let r = try outcomes.map { try $0.get() }
                #expect(r[0].duplicateBatch && r[0].locationsStored == 0 && r[0].locationsDuplicate == 3)
                #expect(!r[1].duplicateBatch && r[1].locationsStored == 4 && r[1].locationsDuplicate == 2)
                #expect(!r[2].duplicateBatch && r[2].locationsStored == 6 && r[2].locationsDuplicate == 0)
                #expect(!r[3].duplicateBatch && r[3].locationsStored == 2 && r[3].locationsDuplicate == 1)
                #expect(r[4].locationsStored == 1 && r[4].eventsStored == 3 && r[4].eventsDuplicate == 0)
                for (i, result) in r.dropFirst(5).enumerated() {
                    #expect(!result.duplicateBatch && result.locationsStored == i + 1 && result.eventsStored == 0)
                }
                // One transaction for the group's new batches.
                let ids = rest.dropFirst().map { "'\($0.batchId.wireString)'" }.joined(separator: ",")
                #expect(
                    try await Self.value(
                        side, "SELECT count(DISTINCT xmin::text)::int8 FROM batches WHERE batch_id IN (\(ids))", as: Int64.self) == 1)
                let expectedFixes: Int64 = 39  // 3 + 2 + 4 + 6 + 2 + 1 + (1 + 2 + … + 6)
                #expect(try await Self.value(side, "SELECT count(*)::int8 FROM locations", as: Int64.self) == expectedFixes)
                #expect(
                    try await Self.value(
                        side, "SELECT batch_id::text FROM locations WHERE id = '\(shared.id.wireString)'", as: String.self)
                        == a.batchId.wireString)
                for e in sized + [withEvents] {
                    #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations)
                }
                // The live log: one event per stored fix and geofence event, in increasing sequence.
                let events = try await store.events(after: 0, limit: 1_000)
                let expectedEvents = 42  // the 39 fixes and 3 geofence events
                #expect(events.count == expectedEvents)
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.seq < $1.seq })
                #expect(try await store.eventMarks().head == events.last?.seq)
            }
        }

        /// One upload that the database refuses (an injected trigger) in a group of seven: it
        /// alone fails and stores nothing; its six neighbours are stored; sent again once the
        /// fault is gone, it is stored.
        @Test func oneBadBatchInAGroupFailsAlone() async throws {
            try await Self.withStore { store, side in
                try await side.query(
                    """
                    CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'injected failure'; END $$
                    """, logger: testLogger)
                try await side.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TRIGGER refuse_poison BEFORE INSERT ON locations FOR EACH ROW
                            WHEN (NEW.latitude = \(GroupCommitSQLite.poison)) EXECUTE FUNCTION refuse_poison()
                            """), logger: testLogger)
                try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(\(Self.eventLock))"), logger: testLogger)
                var bad = Fixtures.envelope(Fixtures.locations(3))
                bad.locations[1].latitude = GroupCommitSQLite.poison
                let first = Fixtures.envelope(Fixtures.locations(2))
                let good = (0..<6).map { _ in Fixtures.envelope(Fixtures.locations(4)) }
                let (firstOutcome, outcomes) = try await Self.send(store, first: first, then: good + [bad]) {
                    try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(Self.eventLock))"), logger: testLogger)
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 2, uploads: 8, waiting: 0))
                #expect(try firstOutcome.get().locationsStored == 2)
                for outcome in outcomes.prefix(6) { #expect(try outcome.get().locationsStored == 4) }
                guard case .failure = outcomes[6] else {
                    Issue.record("the refused batch was answered as stored")
                    return
                }
                for e in good + [first] {
                    #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations)
                }
                #expect(try await store.track(sessionId: bad.sessionId).isEmpty)
                #expect(
                    try await Self.value(
                        side, "SELECT count(*)::int8 FROM batches WHERE batch_id = '\(bad.batchId.wireString)'", as: Int64.self) == 0)
                try await side.query("DROP TRIGGER refuse_poison ON locations", logger: testLogger)
                let retry = try await store.ingest(IngestBatch(envelope: bad, receivedAt: Self.now))
                #expect(!retry.duplicateBatch && retry.locationsStored == 3)
            }
        }

        /// The writer's connection is killed while its group waits inside the transaction
        /// (twice: a group of one, then a group of five): every upload of both groups fails,
        /// none is stored (nothing was acknowledged that was not committed), and sent again,
        /// all are stored.
        /// (A query in flight on a connection the server drops may never be answered by the
        /// driver: the store's deadline then answers it, so this test's is shorter than its waits.
        /// 45 s, not 15: in a loaded full suite on two cores 15 s ran out before the steps did;
        /// a passing run takes well under a second, so only a stuck run waits for it.)
        @Test func aConnectionLostMidGroupAcknowledgesNothing() async throws {
            try await Self.withStore(operationTimeout: 45) { store, side in
                try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock(\(Self.eventLock))"), logger: testLogger)
                let kill =
                    "SELECT count(pg_terminate_backend(pid))::int8 FROM pg_locks WHERE \(Self.waiterOfThisDatabase)"
                let first = Fixtures.envelope(Fixtures.locations(2))
                let rest = (0..<5).map { _ in Fixtures.envelope(Fixtures.locations(4)) }
                let (firstOutcome, outcomes) = try await Self.send(store, first: first, then: rest) {
                    try await Self.until { try await Self.waitingForTheLock(side) == 1 }
                    #expect(try await Self.value(side, kill, as: Int64.self) == 1)
                    // The next group (the five) begins on another connection and waits in turn.
                    try await GroupCommitSQLite.until { store.groupCommitCounts.groups == 2 }
                    try await Self.until { try await Self.waitingForTheLock(side) == 1 }
                    #expect(try await Self.value(side, kill, as: Int64.self) == 1)
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 2, uploads: 6, waiting: 0))
                for outcome in [firstOutcome] + outcomes {
                    guard case .failure = outcome else {
                        Issue.record("an upload whose transaction was killed was answered as stored")
                        continue
                    }
                }
                #expect(try await Self.value(side, "SELECT count(*)::int8 FROM batches", as: Int64.self) == 0)
                #expect(try await Self.value(side, "SELECT count(*)::int8 FROM locations", as: Int64.self) == 0)
                try await side.query(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock(\(Self.eventLock))"), logger: testLogger)
                try await withThrowingTaskGroup(of: IngestResult.self) { group in
                    for e in [first] + rest { group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) } }
                    for try await r in group { #expect(!r.duplicateBatch && r.locationsDuplicate == 0) }
                }
                #expect(try await Self.value(side, "SELECT count(*)::int8 FROM locations", as: Int64.self) == 22)
            }
        }

        /// Issue 32: an upload never waits for an overview rebuild (it would wait holding the
        /// event log's lock, stalling every instance's uploads). A rebuild claims a bucket with an
        /// advisory lock, held here by the test as a rebuild in another instance would: another
        /// rebuild skips the bucket, and an upload into it is stored and marks it at once; once
        /// the claim is gone the bucket is rebuilt with every fix and is no longer stale.
        @Test func anUploadDoesNotWaitForAnOverviewRebuild() async throws {
            try await Self.withStore { store, side in
                let e = Fixtures.envelope(Fixtures.locations(3))
                let stored = try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now))
                #expect(stored.locationsStored == 3)
                let bucketOf = "FROM track_overview_buckets WHERE install_id = '\(e.device.installId.wireString)'"
                let claim = "74657003, hashtext(install_id::text || ':' || bucket::text)"
                #expect(try await Self.value(side, "SELECT count(pg_advisory_lock(\(claim)))::int8 \(bucketOf)", as: Int64.self) == 1)
                #expect(try await store.rebuildOverview(limit: 32) == 0)
                // Thirty seconds after the last fix: the same ten-minute bucket.
                let more = Fixtures.envelope(
                    Fixtures.locations(2, startMillis: Fixtures.base + 90_000), session: e.sessionId, install: e.device.installId)
                #expect(try await store.ingest(IngestBatch(envelope: more, receivedAt: Self.now)).locationsStored == 2)
                #expect(try await Self.value(side, "SELECT dirty::int8 \(bucketOf)", as: Int64.self) == 2)
                #expect(try await Self.value(side, "SELECT count(pg_advisory_unlock(\(claim)))::int8 \(bucketOf)", as: Int64.self) == 1)
                #expect(try await store.rebuildOverview(limit: 32) == 1)
                #expect(try await Self.value(side, "SELECT dirty::int8 \(bucketOf)", as: Int64.self) == 0)
                #expect(try await Self.value(side, "SELECT fixes::int8 \(bucketOf)", as: Int64.self) == 5)
            }
        }

        /// The switch: without group commit every upload is its own transaction.
        @Test func offMeansOneTransactionPerUpload() async throws {
            try await Self.withStore(groupCommit: false) { store, side in
                let batches = (0..<4).map { _ in Fixtures.envelope(Fixtures.locations(3)) }
                try await withThrowingTaskGroup(of: IngestResult.self) { group in
                    for e in batches { group.addTask { try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)) } }
                    for try await r in group { #expect(r.locationsStored == 3) }
                }
                #expect(store.groupCommitCounts == GroupCommitCounts(groups: 0, uploads: 0, waiting: 0))
                #expect(try await Self.value(side, "SELECT count(DISTINCT xmin::text)::int8 FROM batches", as: Int64.self) == 4)
            }
        }

        /// Polls an asynchronous condition, bounded by a generous deadline.
        static func until(_ condition: () async throws -> Bool) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while try await !condition() {
                guard ContinuousClock.now < deadline else { throw StoreError.unavailable("condition not reached within 60 s") }
                try await Task.sleep(for: .milliseconds(5))  // polling the database, bounded by the deadline
            }
        }
    }
}

/// The uploads of a folded-group test (both stores): `stored` (3 fixes, to store first), `partly`
/// (2 of `stored`'s fixes and 4 new), `a` (5 new and `shared`) and `b` (`shared` and 2 new),
/// `withEvents` (1 fix, 3 geofence events), `sized` (1 to 6 fixes).
enum FoldedGroup {
    static func make() -> (
        stored: WireEnvelope, partly: WireEnvelope, shared: WireLocation, a: WireEnvelope, b: WireEnvelope,
        withEvents: WireEnvelope, sized: [WireEnvelope]
    ) {
        let stored = Fixtures.envelope(Fixtures.locations(3))
        let partly = Fixtures.envelope(Array(stored.locations.prefix(2)) + Fixtures.locations(4))
        let shared = Fixtures.locations(1)[0]
        let a = Fixtures.envelope(Fixtures.locations(5) + [shared])
        let b = Fixtures.envelope([shared] + Fixtures.locations(2))
        let fences = (0..<3).map { i in
            WireGeofenceEvent(
                id: Fixtures.ids.next(), geofenceId: "home-\(i)", type: i == 1 ? .exit : .enter,
                timestamp: WireTimestamp(millis: Fixtures.base + Int64(i) * 1_000))
        }
        let withEvents = Fixtures.envelope(Fixtures.locations(1), events: fences)
        return (stored, partly, shared, a, b, withEvents, (1...6).map { Fixtures.envelope(Fixtures.locations($0)) })
    }
}
