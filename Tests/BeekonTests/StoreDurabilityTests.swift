import BeekonTestSupport
import BeekonTesting
import Foundation
import GRDB
import Logging
import Testing

@testable import Beekon

/// ST-1: a stored fix survives a power cut. The connection that commits runs at
/// `synchronous = FULL` in WAL mode, read on the writer itself: GRDB's `DatabasePool` resets its
/// writer to NORMAL after `prepareDatabase` (its WAL set-up), and in WAL mode NORMAL commits
/// with no fsync, so a store that only asked in `prepareDatabase` never synced a fix.
@Suite("Store durability (ST-1)")
struct StoreDurabilityTests {
    @Test func theWriterOfAFreshStoreCommitsWithAnFsync() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        let settings = try await store.writerDurability()
        #expect(settings.synchronous == 2, "2 = FULL")
        #expect(settings.journalMode == "wal")
    }

    /// After tracking stored fixes and the upload bookkeeping committed unforced (NORMAL for
    /// one transaction, see `writeUnforced`), the writer is back at FULL.
    @Test func theWriterStaysAtFullAfterFixesAndUnforcedCommits() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send((0..<3).map { fix(Double($0), north: Double($0) * 10) })
        let store = try await beekon.ready()
        #expect(try await store.writerDurability().synchronous == 2)
        _ = try await store.writeUnforced("test bookkeeping") { db in try db.execute(sql: "SELECT 1") }
        #expect(try await store.writerDurability().synchronous == 2)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 3)
    }

    /// The check can fail: a pool opened the way the store opened it before leaves its writer
    /// at NORMAL (1) although `prepareDatabase` asked for FULL.
    @Test func grdbsPoolAloneLeavesTheWriterAtNormal() async throws {
        let dir = TempDir()
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: dir.db, configuration: configuration)
        #expect(try await pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 1)
        try pool.close()
    }
}
