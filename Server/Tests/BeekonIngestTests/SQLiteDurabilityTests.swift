import BeekonWire
import Foundation
import GRDB
import Testing

@testable import BeekonIngest

extension Ingest {
    /// A 200 means the upload is on disk: the connection that commits runs at
    /// `synchronous = FULL` in WAL mode, whatever GRDB did while opening the pool (its WAL set-up
    /// resets the writer to NORMAL after `prepareDatabase`, which in WAL mode commits with no
    /// fsync). Read on the writer itself, after opening, after commits, in both commit modes.
    @Suite struct SQLiteDurability {
        static let now = WireTimestamp(millis: Fixtures.base + 3_600_000)

        @Test(arguments: [true, false])
        func theWriterCommitsWithAnFsync(groupCommit: Bool) async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let store = try SQLiteLocationStore(path: try db.sqlitePath, groupCommit: groupCommit, logger: testLogger)
            try await store.migrate()
            let opened = try await store.durability()
            #expect(opened.synchronous == 2, "synchronous on the writer after opening (2 = FULL)")
            #expect(opened.journalMode == "wal")
            let stored = try await store.ingest(IngestBatch(envelope: Fixtures.envelope(Fixtures.locations(5)), receivedAt: Self.now))
            #expect(stored.locationsStored == 5)
            let after = try await store.durability()
            #expect(after.synchronous == 2, "synchronous on the writer after a commit")
            #expect(after.journalMode == "wal")
        }

        /// The check can fail: GRDB's pool, opened as the store opened it before, leaves its
        /// writer at NORMAL (1) although `prepareDatabase` asked for FULL.
        @Test func grdbsPoolAloneLeavesTheWriterAtNormal() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            var config = Configuration()
            config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let pool = try DatabasePool(path: try db.sqlitePath, configuration: config)
            let level = try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
            #expect(level == 1)
            try pool.close()
        }
    }
}
