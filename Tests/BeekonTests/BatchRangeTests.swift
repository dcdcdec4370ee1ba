import BeekonTestSupport
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation
import GRDB
import Logging
import Testing

/// A batch's fixes recorded as a row range of its session (`v8-batch-range`) instead
/// of its id written into every row: SY-6 (same id, same rows on every retry) must hold for
/// batches assembled before the upgrade, and no fix stored later may join an open batch.
@Suite("Batch membership as a row range (SY-4, SY-6, ST-6)")
struct BatchRangeTests {
    private static let t0: Int64 = 1_767_225_600_000

    /// A database written by the release before `v8-batch-range` holds a batch in flight whose
    /// rows carry its id (rows 1, 2 and 4: the old assembly took the oldest timestamps, and
    /// row 3 was stored later with a newer one), a row tagged with a batch that no longer
    /// exists, and an untagged pending row. After the upgrade the open batch goes out first
    /// with its id and exactly its rows, and every other fix goes out once under a new id.
    @Test("ST-6, SY-6: an in-flight batch from before v8 migrates and is resent with the same id and rows")
    func anInFlightBatchFromBeforeTheRangeMigrationKeepsItsIDAndRows() async throws {
        let h = Harness()
        let session = UUID()
        let legacy = UUID()
        let ids = (0..<6).map { _ in UUID() }
        let old = try DatabasePool(path: h.dir.db)
        try StoreMigrations.migrator.migrate(old, upTo: "v7-locate")
        try await old.write { db in
            try db.execute(sql: "INSERT INTO session(id, started_at) VALUES (?, 0)", arguments: [session.wireString])
            // rowid: ts offset (s), batch tag
            let rows: [(Int64, String?)] = [
                (0, legacy.wireString), (1, legacy.wireString), (9, nil), (2, legacy.wireString), (3, UUID().wireString), (4, nil),
            ]
            for (i, (seconds, tag)) in rows.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO location(rowid, id, session_id, ts, latitude, longitude, trigger, motion, is_mock, batch_id)
                        VALUES (?, ?, ?, ?, 48, 11, 'interval', 'moving', 0, ?)
                        """, arguments: [i + 1, ids[i].wireString, session.wireString, Self.t0 + seconds * 1000, tag])
            }
            try db.execute(
                sql: "INSERT INTO upload_batch(id, session_id, created_at, extras, attempts) VALUES (?, ?, ?, '{}', 1)",
                arguments: [legacy.wireString, session.wireString, Self.t0 + 5000])
        }
        try old.close()

        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: 2)))
        let sent = await transport.requests.map(\.envelope)
        try #require(sent.count >= 2, "\(sent.map(\.locations.count))")
        #expect(sent[0].batchId == legacy)
        #expect(sent[0].sentAt.millis == Self.t0 + 5000, "the batch's own sent_at")
        #expect(sent[0].locations.map(\.id) == [ids[0], ids[1], ids[3]], "exactly the tagged rows, in time order")
        let rest = sent.dropFirst().flatMap(\.locations).map(\.id)
        #expect(rest.sorted { $0.wireString < $1.wireString } == [ids[2], ids[4], ids[5]].sorted { $0.wireString < $1.wireString })
        #expect(Set(sent.map(\.batchId)).count == sent.count, "one id per batch")
        #expect(sent.dropFirst().allSatisfy { $0.locations.count <= 2 })
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(try await beekon.storeReport().openBatches == 0)
        let leftTagged = try await beekon.ready().pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location WHERE batch_id IS NOT NULL")
        }
        #expect(leftTagged == 0)
    }

    /// The attack on a range: a batch's last row is deleted (here by `deleteLocations`, the
    /// oldest timestamp), so SQLite would give the next fix the same rowid — inside the open
    /// batch's range, of the same session. The retry must still carry only the rows the batch
    /// had, and the new fix must go out in a batch of its own.
    @Test("SY-6: a fix stored after a batch's assembly never joins it, also when the range's last row was deleted")
    func aFixStoredLaterNeverJoinsAnOpenBatch() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        let session = UUID()
        func location(_ seconds: Int64) -> Location {
            Location(
                id: UUID(), sessionId: session, timestamp: WireTimestamp(millis: Self.t0 + seconds * 1000).date, latitude: 48,
                longitude: 11)
        }
        let stored = [location(10), location(11), location(5)]
        for l in stored { try await store.insert(l, syncOn: true, by: .storeTestsOnly) }
        let now = WireTimestamp(millis: Self.t0 + 60_000).date
        let batch = try #require(try await store.nextBatch(limit: 10, now: now, makeID: { UUID() }))
        #expect(batch.locations.map(\.id) == [stored[2].id, stored[0].id, stored[1].id])
        // Deletes the batch's last row (rowid 3); the next insert takes rowid 3 again.
        #expect(try await store.deleteLocations(before: WireTimestamp(millis: Self.t0 + 6000).date) == 1)
        let later = location(20)
        try await store.insert(later, syncOn: true, by: .storeTestsOnly)
        let reused = try await store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT rowid FROM location WHERE id = ?", arguments: [later.id.wireString])
        }
        #expect(reused == 3, "SQLite reused the deleted rowid: the attack is real")
        let retry = try #require(try await store.nextBatch(limit: 10, now: now, makeID: { UUID() }))
        #expect(retry.id == batch.id)
        #expect(retry.locations.map(\.id) == [stored[0].id, stored[1].id], "the batch's rows, without the later fix")
        #expect(try await store.acknowledge(batch.id, keepLocations: true) == 2)
        let next = try #require(try await store.nextBatch(limit: 10, now: now, makeID: { UUID() }))
        #expect(next.id != batch.id && next.locations.map(\.id) == [later.id])
    }

    /// The assembly of the next batch while one is in flight skips the in-flight range and stops
    /// before any other open range, and a batch released after a 409 (its range gone) returns
    /// its rows to the queue ahead of the later ones.
    @Test("SY-4, SY-6: ranges never overlap; released rows go out again, each fix in one open batch at a time")
    func rangesNeverOverlap() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        let session = UUID()
        let fixes = (0..<7).map { i in
            Location(
                id: UUID(), sessionId: session, timestamp: WireTimestamp(millis: Self.t0 + Int64(i) * 1000).date, latitude: 48,
                longitude: 11)
        }
        for l in fixes { try await store.insert(l, syncOn: true, by: .storeTestsOnly) }
        let now = WireTimestamp(millis: Self.t0 + 60_000).date
        let b1 = try #require(try await store.nextBatch(limit: 2, now: now, makeID: { UUID() }))
        let b2 = try #require(try await store.nextBatch(limit: 2, now: now, excluding: [b1.id], makeID: { UUID() }))
        let b3 = try #require(try await store.nextBatch(limit: 2, now: now, excluding: [b1.id, b2.id], makeID: { UUID() }))
        #expect(
            [b1, b2, b3].map { $0.locations.map(\.id) } == [
                [fixes[0].id, fixes[1].id], [fixes[2].id, fixes[3].id], [fixes[4].id, fixes[5].id],
            ])
        // b2 refused as a reused id: its rows are free again, between two open ranges.
        try await store.release(b2)
        let b4 = try #require(try await store.nextBatch(limit: 5, now: now, excluding: [b1.id, b3.id], makeID: { UUID() }))
        #expect(b4.locations.map(\.id) == [fixes[2].id, fixes[3].id], "stops before b3's range")
        let b5 = try #require(try await store.nextBatch(limit: 5, now: now, excluding: [b1.id, b3.id, b4.id], makeID: { UUID() }))
        #expect(b5.locations.map(\.id) == [fixes[6].id])
        #expect(try await store.nextBatch(limit: 5, now: now, excluding: [b1.id, b3.id, b4.id, b5.id], makeID: { UUID() }) == nil)
        for b in [b1, b3, b4, b5] { _ = try await store.acknowledge(b.id, keepLocations: false) }
        #expect(try await store.pendingCount() == 0)
        #expect(try await store.history(from: .distantPast, to: .distantFuture).isEmpty, "acknowledged without keeping: deleted")
    }

    /// Fixes whose session row is gone (pruned, or stored by a release that kept none) still go
    /// out: after the known sessions, one session at a time in id order, each fix once. The
    /// orphan sessions are found by one index seek each (P3-cpu), not by a walk over
    /// every pending row.
    @Test("SY-4: sessions missing from the session table drain after the known ones, in id order, each fix once")
    func orphanSessionsDrainInIDOrderAfterTheKnownOnes() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        let sessions = (0..<3).map { _ in UUID() }.sorted { $0.wireString < $1.wireString }
        // The largest id is the known one: it still goes first.
        let known = sessions[2]
        try await store.pool.write { db in
            try db.execute(sql: "INSERT INTO session(id, started_at) VALUES (?, 0)", arguments: [known.wireString])
        }
        var stored: [UUID: [UUID]] = [:]
        for i in 0..<9 {
            let session = sessions[i % 3]
            let l = Location(
                id: UUID(), sessionId: session, timestamp: WireTimestamp(millis: Self.t0 + Int64(i) * 1000).date, latitude: 48,
                longitude: 11)
            try await store.insert(l, syncOn: true, by: .storeTestsOnly)
            stored[session, default: []].append(l.id)
        }
        let now = WireTimestamp(millis: Self.t0 + 60_000).date
        var order: [UUID] = []
        while let batch = try await store.nextBatch(limit: 2, now: now, makeID: { UUID() }) {
            #expect(Set(batch.locations.map(\.sessionId)).count == 1, "one session per batch")
            order.append(contentsOf: batch.locations.map(\.id))
            #expect(try await store.acknowledge(batch.id, keepLocations: true) == batch.locations.count)
            #expect(order.count <= 9, "no fix twice")
        }
        #expect(order == stored[known]! + stored[sessions[0]]! + stored[sessions[1]]!)
        #expect(try await store.pendingCount() == 0)
    }
}
