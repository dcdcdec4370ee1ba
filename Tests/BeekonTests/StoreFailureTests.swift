import BeekonTestSupport
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation
import GRDB
import Testing

@Suite("Storage failures and migrations (ST-6, ST-7)")
struct StoreFailureTests {
    @Test func diskFullIsAStorageErrorAndLosesNothingAlreadyStored() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send((0..<5).map { fix(Double($0), north: Double($0) * 10) })
        // Real SQLITE_FULL: cap the writer connection's file size at what it already uses.
        let store = try await beekon.ready()
        try await store.pool.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        await h.provider.send((5..<400).map { fix(Double($0), north: Double($0) * 10) })
        let stats = await beekon.statistics
        #expect(stats.storeFailures > 0, "the disk filled up")
        guard case .storage(let message)? = stats.lastError else {
            Issue.record("no storage error")
            return
        }
        #expect(message.contains("disk is full"))
        #expect(beekon.currentState == .tracking, "a full disk never crashes or stops tracking")
        let kept = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(kept.count == stats.stored && kept.count >= 5, "every row stored before stays")
        // Space comes back: tracking stores again.
        try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        await h.provider.send(fix(1000, north: 10_000))
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == kept.count + 1)
    }

    @Test func aDatabaseFromTheFirstSchemaVersionOpensAndKeepsItsRows() async throws {
        let dir = TempDir()
        // Write a database as the first release did: only the v1 migration, one session, two fixes.
        let old = try DatabasePool(path: dir.db)
        try StoreMigrations.migrator.migrate(old, upTo: "v1-core")
        let session = UUID()
        try await old.write { db in
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('tracking_intent', ?)", arguments: [session.wireString])
            try db.execute(sql: "INSERT INTO session(id, started_at) VALUES (?, 0)", arguments: [session.wireString])
            for i in 0..<2 {
                try db.execute(
                    sql: """
                        INSERT INTO location(id, session_id, ts, latitude, longitude, trigger, motion, is_mock)
                        VALUES (?, ?, ?, 48, 11, 'interval', 'moving', 0)
                        """, arguments: [UUID().wireString, session.wireString, 1_700_000_000_000 + i * 1000])
            }
        }
        try old.close()
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: TestClock()))
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 2)
        #expect(try await beekon.pendingUploadCount() == 2, "v2 added the upload queue; old rows are pending")
        #expect(try await beekon.resumeIfNeeded(), "the tracking intent survives the upgrade")
        #expect(await beekon.sessionID == session)
        let applied = try await beekon.ready().pool.read { db in try StoreMigrations.migrator.appliedIdentifiers(db) }
        #expect(applied == Set(StoreMigrations.migrator.migrations))
    }
}
