import BeekonIngest
import BeekonWire
import Foundation
import GRDB
import Testing

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
            guard case .sqlite(let path) = db.location else {
                Issue.record("not SQLite")
                return
            }
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
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
            // The write lock, held by a thread of its own until `release` is signalled.
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
                release.signal()
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
            guard case .sqlite(let path) = db.location else {
                Issue.record("not SQLite")
                return
            }
            let store = try SQLiteLocationStore(path: path, groupCommit: false, logger: testLogger)
            try await store.migrate()
            let e = Fixtures.envelope(Fixtures.locations(3))
            #expect(try await store.ingest(IngestBatch(envelope: e, receivedAt: Self.now)).locationsStored == 3)
            #expect(store.groupCommitCounts == GroupCommitCounts(groups: 0, uploads: 0, waiting: 0))
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
