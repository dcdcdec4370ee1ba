import BeekonPrimitives
import BeekonWire
import Foundation
import GRDB
import GRDBSQLite
import Logging
import ServiceLifecycle

/// The zero-setup store: one SQLite file in WAL mode with `synchronous=FULL`,
/// so a commit is on disk before the 2xx is sent. Writes are serialised by
/// GRDB's single writer connection; reads run concurrently from the pool.
package final class SQLiteLocationStore: LocationStore, TokenStore, ShareStore {
    let pool: DatabasePool
    let logger: Logger
    /// Concurrent uploads' shared transactions; nil: one transaction per upload.
    let group: GroupCommit<SQLiteUpload, IngestResult>?
    /// Where the writer's time goes, for `/metrics` (issue 32).
    let timings: Locked<WriterTimings>
    /// Which installs may have an open locate request (see `OpenLocateHint`).
    let openLocates = Locked(OpenLocateHint())
    /// Runs the WAL checkpoints off the writer (see `SQLiteCheckpointer`); nil: SQLite's own,
    /// inside the writer's commits.
    let checkpointer: SQLiteCheckpointer?
    /// A read-only connection for the one read every upload makes (its credential's binding),
    /// run on the calling thread (see `inlineRead`).
    let inlineReader: DatabaseQueue

    /// Opens (or creates) the database file at `path`. With `groupCommit` (the default),
    /// concurrent uploads share one transaction and one fsync (see `GroupCommit`). A write that
    /// finds the file locked by another process waits up to `busyTimeout` seconds. With
    /// `checkpoints` (``SQLiteCheckpointer/Policy/standard`` for a server), WAL checkpoints run on a
    /// connection of their own instead of inside the writer's commits (see `SQLiteCheckpointer`).
    init(
        path: String, groupCommit: Bool = true, busyTimeout: TimeInterval = 10,
        checkpoints: SQLiteCheckpointer.Policy?, checkpointed: (@Sendable (SQLiteCheckpointer.Counts) -> Void)? = nil,
        logger: Logger
    ) throws(StoreError) {
        let checkpointer = checkpoints.map { SQLiteCheckpointer(policy: $0, finished: checkpointed) }
        var config = Configuration()
        config.label = "beekon-ingest"
        config.busyMode = .timeout(busyTimeout)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
            // The writer's page cache holds a group's dirty pages until its commit (issue 32):
            // at SQLite's default 2 MiB a group of uploads from 1,000 devices touches more index
            // pages than that, and SQLite spilled them to the WAL mid-transaction (10 % of the
            // server's CPU in cache stress and its writes). Readers keep the default.
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -\(Self.writerCacheKiB)")
                // After a checkpoint lets the WAL restart, the file is cut back to this size.
                try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimitBytes)")
                checkpointer?.install(on: db)
            }
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // `DatabasePool.init` resets its writer to `synchronous = NORMAL` after
            // `prepareDatabase` ran (GRDB's WAL set-up), and in WAL mode NORMAL commits with no
            // fsync: a 200 would not mean the upload is on disk. Set the writer again here,
            // after GRDB is done with it; `durability()` reads it back.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try checkpointer?.open(path: path)
            var reader = Configuration()
            reader.label = "beekon-ingest.inline-read"
            reader.readonly = true
            // Its open waits for a lock like the pool's (another connection opening the file or
            // recovering its WAL: opened with no wait, a second store on a running server's file
            // failed "database is locked" at start); its reads never sleep on a lock: a busy
            // database is read through the pool instead (`inlineRead`).
            reader.busyMode = .timeout(busyTimeout)
            inlineReader = try DatabaseQueue(path: path, configuration: reader)
            inlineReader.inDatabase { db in _ = sqlite3_busy_timeout(db.sqliteConnection, 0) }
        } catch {
            throw .unavailable("cannot open SQLite file \(path): \(error)")
        }
        self.checkpointer = checkpointer
        self.logger = logger
        let timings = Locked(WriterTimings())
        self.timings = timings
        group = groupCommit ? GroupCommit { [pool] uploads in await Self.commit(uploads, pool: pool, timings: timings) } : nil
    }

    /// The writer connection's effective `synchronous` level (2: FULL, an fsync per commit) and
    /// `journal_mode`, read on the connection that commits.
    package func durability() async throws -> (synchronous: Int, journalMode: String) {
        try await pool.writeWithoutTransaction { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1, try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "")
        }
    }

    /// The writer connection's page cache bound, in KiB (64 MiB).
    static let writerCacheKiB = 65_536

    /// What the WAL file is truncated to when it restarts (64 MiB).
    static let walSizeLimitBytes = 64 << 20

    /// The opening a server uses: the default checkpoint policy, no test hook.
    package convenience init(path: String, groupCommit: Bool = true, busyTimeout: TimeInterval = 10, logger: Logger) throws(StoreError) {
        try self.init(path: path, groupCommit: groupCommit, busyTimeout: busyTimeout, checkpoints: .standard, logger: logger)
    }

    package var services: [any Service] { [] }
    package var tokens: any TokenStore { self }
    package var shares: any ShareStore { self }

    package func migrate() async throws(StoreError) {
        try migrate(upTo: nil)
    }

    /// SQLite's statements for each schema step; nil for a step SQLite does not take.
    static func schema(for step: SchemaStep) -> String? {
        if let column = step.addedFixColumn { return column.addColumn(.sqlite) }
        return switch step {
        case .base: SQLiteSchema.v1
        case .events: SQLiteSchema.v2
        case .deviceStatus: SQLiteSchema.v3
        case .proximity: proximitySchema
        case .locate: SQLiteLocateSchema.v5
        case .trackOverview: SQLiteOverviewSchema.v7
        case .deviceIdentity: SQLiteIdentitySchema.v8
        case .push: SQLitePushSchema.v9
        case .partitions: nil  // PostgreSQL partitions its fixes by week; SQLite keeps one table
        case .shareScope: shareScopeSchema
        case .credentials: SQLiteIdentitySchema.v11
        case .circles: SQLiteCircleSchema.v12
        case .nudges: SQLiteNudgeSchema.v13
        // A step that adds a fix column, rendered above from its one description.
        default: nil
        }
    }

    /// Migrates up to and including the migration named `target` (nil: every one); tests use it
    /// to write rows in an older schema.
    func migrate(upTo target: String?) throws(StoreError) {
        var migrator = DatabaseMigrator()
        // The steps every store follows, in order (``SchemaStep``), under SQLite's frozen names.
        for step in SchemaStep.allCases {
            guard let name = step.sqliteName, let sql = Self.schema(for: step) else { continue }
            migrator.registerMigration(name) { db in try db.execute(sql: sql) }
        }
        do {
            if let target { try migrator.migrate(pool, upTo: target) } else { try migrator.migrate(pool) }
            // A multi-row insert inside a transaction keeps a statement journal: the original of
            // every page the statement changes, so that it alone can be undone. SQLite keeps it
            // in memory up to 64 KiB, then spills it to a temporary file: a create, writes and a
            // delete per group, 30 % of the writer's time at 1,000 uploads/s (issue 32). On the
            // writer it now stays in memory. It holds one statement's pages (at most 64 rows,
            // see `commit`: a group takes no savepoint; a retried upload takes one, bounded by
            // its body), and it is emptied when the statement ends. Set after the migrations,
            // whose one-off statements over a whole old table (v7's `SELECT DISTINCT`) keep
            // SQLite's default and may spill to a file.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
            if target == nil { try loadOpenLocateHint() }
        } catch {
            throw .migrationFailed("\(error)")
        }
    }

    package func ping() async throws(StoreError) {
        try await run { db in _ = try Int.fetchOne(db, sql: "SELECT 1") }
    }

    package func ingest(_ batch: IngestBatch) async throws(StoreError) -> IngestResult {
        // Everything that needs no write lock happens here, before the writer (issue 32).
        let upload = SQLiteUpload(batch)
        if let group { return try await group.submit(upload) }
        do {
            return try await Self.timedWrite(pool, timings, uploads: 1) { db in try Self.store([upload], into: db)[0] }
        } catch {
            throw .queryFailed("\(error)")
        }
    }

    /// The writer's time so far, by phase.
    package var writerTimings: WriterTimings { timings.value }

    package var writerMetricsText: String {
        timings.value.metricsText() + (checkpointer.map { SQLiteCheckpointer.metricsText($0.counts) } ?? "")
    }

    /// An ingest transaction, its phases added to `timings`.
    static func timedWrite<T: Sendable>(
        _ pool: DatabasePool, _ timings: Locked<WriterTimings>, uploads: Int, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let asked = ContinuousClock.now
        let (value, began, ended) = try await pool.write { db in
            let began = ContinuousClock.now
            let value = try body(db)
            return (value, began, ContinuousClock.now)
        }
        let done = ContinuousClock.now
        timings.withLock { $0.record(uploads: uploads, wait: began - asked, statements: ended - began, commit: done - ended) }
        return value
    }

    /// What group commit has done so far (zeros without it).
    package var groupCommitCounts: GroupCommitCounts { group?.counts ?? GroupCommitCounts(groups: 0, uploads: 0, waiting: 0) }

    /// One group's transaction: the whole group folded into the transaction (`store`), no
    /// savepoint, so SQLite keeps no copy of the pages the group changes beyond one statement's
    /// journal. If one of its statements fails, the transaction rolls back whole and a second one
    /// stores every upload again alone, each in a savepoint of its own, so a bad one fails alone
    /// and is answered with its error. If the transaction itself fails (BEGIN, COMMIT), nothing
    /// of the group is stored and every upload is answered with that error. One commit for all:
    /// every answer waits for it.
    static func commit(
        _ uploads: [SQLiteUpload], pool: DatabasePool, timings: Locked<WriterTimings>
    ) async -> [Result<IngestResult, StoreError>] {
        do {
            let folded = try await timedWrite(pool, timings, uploads: uploads.count) { db in
                do { return try store(uploads, into: db) } catch { throw FoldFailed() }
            }
            return folded.map { .success($0) }
        } catch is FoldFailed {
            // Rolled back; each upload again, alone, below.
        } catch {
            return uploads.map { _ in .failure(.queryFailed("\(error)")) }
        }
        do {
            return try await timedWrite(pool, timings, uploads: uploads.count) { db in
                uploads.map { upload in
                    var answer: Result<IngestResult, StoreError> = .failure(.queryFailed("not stored"))
                    do {
                        try db.inSavepoint {
                            answer = .success(try store([upload], into: db)[0])
                            return .commit
                        }
                    } catch {
                        answer = .failure(.queryFailed("\(error)"))
                    }
                    return answer
                }
            }
        } catch {
            return uploads.map { _ in .failure(.queryFailed("\(error)")) }
        }
    }

    /// A statement of a folded group failed: the group's transaction is rolled back, and each
    /// upload's own error comes from running it alone.
    private struct FoldFailed: Error {}

    /// Runs a write transaction, mapping errors to `StoreError`.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.write(body)
        } catch {
            throw .queryFailed("\(error)")
        }
    }

    /// Runs a read of exactly one statement, outside a transaction, mapping errors to
    /// `StoreError`. In SQLite a statement run outside BEGIN is its own transaction: it sees one
    /// snapshot from its first step to its last. `read`'s BEGIN and COMMIT add nothing for one
    /// statement, and they cost two statements compiled afresh per read. The hot reads use this
    /// (a device's binding on every upload, the live log's tail after every commit; issue 32).
    /// Use `run` for anything that reads twice.
    func runOne<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.unsafeRead(body)
        } catch {
            throw .queryFailed("\(error)")
        }
    }

    /// Runs a read of exactly one short statement on the calling thread, on `inlineReader`,
    /// outside a transaction (its own snapshot, as in `runOne`). The pool's `unsafeRead` moves
    /// each read to a dispatch queue to wait for a free reader, then to the reader's queue, and
    /// back to the task each time: four thread hand-offs, per upload for the binding read
    /// (issue 32). Here the statement runs where the task runs; a second caller waits for the
    /// first one's statement, never for a task. A WAL reader waits for no writer and no
    /// checkpoint of this store; should the file still be busy (another process holding it
    /// exclusively, a recovery), the inline read does not sleep on a thread of Swift's small
    /// shared pool: it fails at once and the read runs through the pool (`runOne`), which waits
    /// up to the busy timeout on threads of its own. Not for reads that can take long.
    func inlineRead<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try inlineReader.inDatabase(body)
        } catch let error where Self.isBusy(error) {
            return try await runOne(body)
        } catch {
            throw .queryFailed("\(error)")
        }
    }

    /// Whether `error` says the file was locked (`SQLITE_BUSY`, `SQLITE_LOCKED`, with any
    /// extended code), rather than that the read itself failed.
    static func isBusy(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// Closes the inline reader first: SQLite deletes the WAL when its last connection closes,
    /// and only a connection that may write can (the pool closes its readers before its writer
    /// for the same reason).
    deinit {
        try? inlineReader.close()
    }

    /// Runs a read, mapping errors to `StoreError`.
    func run<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw .queryFailed("\(error)")
        }
    }
}

/// The SQLite schema; timestamps are Unix milliseconds, ids lowercase UUID text.
enum SQLiteSchema {
    static let v1 = """
        CREATE TABLE batches (
            batch_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, install_id TEXT NOT NULL,
            sent_at INTEGER NOT NULL, received_at INTEGER NOT NULL, platform TEXT NOT NULL,
            sdk_version TEXT NOT NULL, model TEXT, extras TEXT, principal TEXT,
            location_count INTEGER NOT NULL, event_count INTEGER NOT NULL);
        CREATE INDEX batches_install ON batches (install_id, received_at);
        CREATE TABLE locations (
            id TEXT PRIMARY KEY, install_id TEXT NOT NULL, session_id TEXT NOT NULL, batch_id TEXT NOT NULL,
            ts INTEGER NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL,
            accuracy REAL, speed REAL, bearing REAL, altitude REAL,
            trigger TEXT NOT NULL, motion TEXT NOT NULL, is_mock INTEGER NOT NULL,
            activity TEXT, quality TEXT, received_at INTEGER NOT NULL);
        CREATE INDEX locations_device_time ON locations (install_id, ts, id);
        CREATE INDEX locations_session_time ON locations (session_id, ts, id);
        CREATE TABLE geofence_events (
            id TEXT PRIMARY KEY, install_id TEXT NOT NULL, session_id TEXT NOT NULL, batch_id TEXT NOT NULL,
            geofence_id TEXT NOT NULL, type TEXT NOT NULL, ts INTEGER NOT NULL, received_at INTEGER NOT NULL);
        CREATE INDEX geofence_events_session ON geofence_events (session_id, ts);
        CREATE TABLE refresh_tokens (
            token_hash TEXT PRIMARY KEY, subject TEXT NOT NULL, family TEXT NOT NULL,
            issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, replaced_by TEXT,
            revoked INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX refresh_tokens_family ON refresh_tokens (family);
        CREATE TABLE server_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        """

    /// Device status: the interval a device declared, and the last published status.
    static let v3 = """
        ALTER TABLE batches ADD COLUMN expected_interval INTEGER;
        CREATE TABLE device_status (install_id TEXT PRIMARY KEY, status TEXT NOT NULL, changed_at INTEGER NOT NULL);
        """

    /// The event log: `seq` is the rowid (AUTOINCREMENT: never reused, even after pruning).
    static let v2 = """
        CREATE TABLE events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, install_id TEXT NOT NULL,
            ts INTEGER NOT NULL, received_at INTEGER NOT NULL, payload TEXT NOT NULL);
        CREATE INDEX events_received ON events (received_at);
        CREATE TABLE shares (
            id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, label TEXT, devices TEXT,
            created_at INTEGER NOT NULL, expires_at INTEGER, history_seconds INTEGER, live INTEGER NOT NULL,
            precision_m REAL, revoked_at INTEGER);
        CREATE TABLE share_access (
            id INTEGER PRIMARY KEY AUTOINCREMENT, share_id TEXT NOT NULL, at INTEGER NOT NULL,
            what TEXT NOT NULL, path TEXT NOT NULL, outcome TEXT NOT NULL);
        CREATE INDEX share_access_share ON share_access (share_id, id);
        """
}
