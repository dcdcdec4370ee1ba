import BeekonWire
import Foundation
import GRDB
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 32: SQLite's WAL checkpoints run on a connection of their own, not inside the one
    /// writer's commits; the writer only finishes them (a few frames) and still bounds the WAL.
    @Suite struct SQLiteCheckpoints {
        static let now = WireTimestamp(millis: Fixtures.base + 3_600_000)

        /// A store on a fresh file with `policy`; the background checkpoints' counts arrive on the stream.
        static func withStore(
            _ policy: SQLiteCheckpointer.Policy,
            _ body: (SQLiteLocationStore, AsyncStream<SQLiteCheckpointer.Counts>) async throws -> Void
        ) async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let (stream, continuation) = AsyncStream<SQLiteCheckpointer.Counts>.makeStream()
            let store = try SQLiteLocationStore(
                path: try db.sqlitePath, checkpoints: policy, checkpointed: { continuation.yield($0) }, logger: testLogger)
            try await store.migrate()
            try await body(store, stream)
            continuation.finish()
        }

        /// Stores one upload of ten fixes; its envelope.
        @discardableResult
        static func upload(_ store: SQLiteLocationStore) async throws -> WireEnvelope {
            let e = Fixtures.envelope(Fixtures.locations(10))
            #expect(try await store.ingest(IngestBatch(envelope: e, receivedAt: now)).locationsStored == 10)
            return e
        }

        /// Past `backgroundFrames` a commit hands the checkpoint to the background connection
        /// (the writer runs none); it copies every frame, the writer's next commit finishes the
        /// checkpoint (copying that commit's own frames), and the commit after that finds the WAL
        /// restarted, holding only its own frames. Nothing stored is lost on the way.
        // The limit only stops a hang (a background run that never reports); under the whole
        // suite on two cores this test, starved of CPU and fsyncs, has taken 95 s.
        @Test(.timeLimit(.minutes(10)))
        func theBackgroundConnectionCheckpointsAndTheWriterOnlyFinishes() async throws {
            // Above what the migrations leave in the WAL, so the first background checkpoint is the uploads'.
            let policy = SQLiteCheckpointer.Policy(backgroundFrames: 400, finishFrames: 8, writerFrames: 1_000_000)
            try await Self.withStore(policy) { store, checkpoints in
                let checkpointer = try #require(store.checkpointer)
                try #require(checkpointer.counts.background == 0 && checkpointer.counts.largestWAL < policy.backgroundFrames)
                var sent: [WireEnvelope] = []
                while checkpointer.counts.largestWAL < policy.backgroundFrames {
                    sent.append(try await Self.upload(store))
                    try #require(sent.count < 1_000, "the WAL never reached the background threshold")
                }
                var seen = checkpoints.makeAsyncIterator()
                let first = try #require(await seen.next())
                #expect(first.background == 1)
                #expect(first.writerFinish == 0 && first.writerBound == 0)
                #expect(checkpointer.counts.walFrames >= policy.backgroundFrames)
                sent.append(try await Self.upload(store))  // the writer finishes the checkpoint
                #expect(checkpointer.counts.writerFinish == 1)
                sent.append(try await Self.upload(store))  // this commit restarts the WAL: it holds only its own frames
                #expect(checkpointer.counts.walFrames < policy.backgroundFrames / 4)
                #expect(checkpointer.counts.writerBound == 0)
                for e in sent { #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations) }
                #expect(store.writerMetricsText.contains("beekon_sqlite_checkpoints_total{connection=\"background\"} 1\n"))
            }
        }

        /// The bound holds when the background connection never gets to run (here: its
        /// threshold is out of reach): the writer checkpoints on its own at `writerFrames`, so
        /// the WAL stays within the bound plus one commit's frames.
        @Test func theWriterBoundsTheWALWhenTheBackgroundDoesNotRun() async throws {
            let policy = SQLiteCheckpointer.Policy(backgroundFrames: .max, finishFrames: 0, writerFrames: 48)
            try await Self.withStore(policy) { store, _ in
                let checkpointer = try #require(store.checkpointer)
                var sent: [WireEnvelope] = []
                let boundsBefore = checkpointer.counts.writerBound  // the migrations may have reached it too
                var largestCommit: Int32 = 0
                var largestWAL: Int32 = 0
                for _ in 0..<24 {
                    let before = checkpointer.counts.walFrames
                    sent.append(try await Self.upload(store))
                    let after = checkpointer.counts.walFrames
                    if after > before { largestCommit = max(largestCommit, after - before) }
                    largestWAL = max(largestWAL, after)
                }
                let counts = checkpointer.counts
                #expect(counts.writerBound - boundsBefore >= 2)
                #expect(counts.background == 0)
                #expect(largestWAL < policy.writerFrames + largestCommit)
                for e in sent { #expect(try await store.track(sessionId: e.sessionId).map(\.location) == e.locations) }
            }
        }

        /// Without a policy the store leaves checkpoints to SQLite (inside the writer's commits).
        @Test func noPolicyMeansSQLitesOwnCheckpoints() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let store = try SQLiteLocationStore(path: try db.sqlitePath, checkpoints: nil, logger: testLogger)
            try await store.migrate()
            #expect(store.checkpointer == nil)
            let autocheckpoint = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
            #expect(autocheckpoint == 1_000)
            #expect(!store.writerMetricsText.contains("beekon_sqlite_checkpoints_total"))
        }
    }

    /// The checkpoint schedule as a value (no SQLite): what each commit and each background
    /// run leads to.
    @Suite struct CheckpointScheduleRules {
        static let policy = SQLiteCheckpointer.Policy(backgroundFrames: 100, finishFrames: 10, writerFrames: 1_000)

        func commit(_ s: inout CheckpointSchedule, _ frames: Int32, open: Bool = true) -> CheckpointSchedule.Action {
            s.committed(frames: frames, backgroundOpen: open)
        }

        func finished(_ s: inout CheckpointSchedule, _ remaining: Int?, _ seconds: Double) -> Bool {
            s.backgroundFinished(remaining: remaining, seconds: seconds)
        }

        @Test func belowTheThresholdNothingRunsAndOneBackgroundRunAtATime() {
            var s = CheckpointSchedule(policy: Self.policy)
            #expect(commit(&s, 99, open: true) == .none)
            #expect(commit(&s, 100, open: false) == .none)  // no background connection yet
            #expect(commit(&s, 100, open: true) == .startBackground)
            #expect(commit(&s, 150, open: true) == .none)  // folded into one more run
            #expect(finished(&s, 50, 0.5))  // 50 > 10 left and asked meanwhile: again
            #expect(!finished(&s, 60, 0.5))  // nobody asked since: done
            #expect(s.counts.background == 2 && s.counts.backgroundSeconds == 1.0)
            #expect(s.counts.largestWAL == 150 && s.counts.walFrames == 150)
        }

        @Test func aFewFramesLeftAreFinishedByTheWritersNextCommitAndSoAreNone() {
            var s = CheckpointSchedule(policy: Self.policy)
            #expect(commit(&s, 120, open: true) == .startBackground)
            #expect(commit(&s, 130, open: true) == .none)
            #expect(!finished(&s, 10, 0))  // close enough: no second run
            #expect(commit(&s, 140, open: true) == .checkpointOnWriter(.finish))
            s.writerRan(.finish, ok: true)
            #expect(commit(&s, 12, open: true) == .none)  // restarted
            #expect(s.counts.writerFinish == 1)
            #expect(commit(&s, 100, open: true) == .startBackground)
            #expect(!finished(&s, 0, 0))  // commits may have added frames meanwhile: the writer copies them
            #expect(commit(&s, 130, open: true) == .checkpointOnWriter(.finish))
        }

        @Test func aRefusedFinishIsTriedAgainAndARefusedBackgroundRunIsNotCounted() {
            var s = CheckpointSchedule(policy: Self.policy)
            #expect(commit(&s, 100, open: true) == .startBackground)
            #expect(!finished(&s, 5, 0))
            #expect(commit(&s, 105, open: true) == .checkpointOnWriter(.finish))
            s.writerRan(.finish, ok: false)
            #expect(commit(&s, 110, open: true) == .checkpointOnWriter(.finish))
            s.writerRan(.finish, ok: true)
            #expect(s.counts.writerBusy == 1 && s.counts.writerFinish == 1)
            #expect(commit(&s, 100, open: true) == .startBackground)
            #expect(!finished(&s, nil, 0))
            #expect(s.counts.background == 1)
        }

        @Test func theBoundComesFirst() {
            var s = CheckpointSchedule(policy: Self.policy)
            #expect(commit(&s, 500, open: true) == .startBackground)
            #expect(commit(&s, 1_000, open: true) == .checkpointOnWriter(.bound))
            s.writerRan(.bound, ok: true)
            #expect(commit(&s, 1_200, open: true) == .checkpointOnWriter(.bound))
            s.writerRan(.bound, ok: false)
            #expect(s.counts.writerBound == 1 && s.counts.writerBusy == 1)
        }
    }
}
