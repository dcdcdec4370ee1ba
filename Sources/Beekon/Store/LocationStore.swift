import BeekonPrimitives
import BeekonWire
import Foundation
import GRDB
import Logging

/// The on-device SQLite database (ST-1..7): one GRDB `DatabasePool` (WAL) per
/// file, owned by one `Beekon` instance, the only writer. Every write is one
/// explicit transaction; every failure surfaces as `BeekonError.storage`.
final class LocationStore: Sendable {
    /// Row cap in every mode (ST-3).
    static let defaultRowCap = 100_000
    /// Age limit in local-only mode (ST-3).
    static let localOnlyMaxAge: TimeInterval = 7 * 86_400

    let pool: DatabasePool
    let path: String
    let rowCap: Int
    let logger: Logger
    private let rowCount = Locked<Int?>(nil)

    /// Opens (creating if needed) and migrates the database at `path`.
    init(path: String, rowCap: Int = LocationStore.defaultRowCap, logger: Logger, readOnly: Bool = false) throws(BeekonError) {
        self.path = path
        self.rowCap = rowCap
        self.logger = logger
        var configuration = Configuration()
        configuration.readonly = readOnly
        configuration.busyMode = .timeout(5)
        configuration.label = "beekon"
        configuration.prepareDatabase { db in try Self.makeDurable(db) }
        do {
            if !readOnly {
                let dir = (path as NSString).deletingLastPathComponent
                if !dir.isEmpty { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            if !readOnly {
                // `DatabasePool.init` sets its writer to `synchronous = NORMAL` after
                // `prepareDatabase` ran (GRDB's WAL set-up), and in WAL mode NORMAL commits with no
                // fsync at all: set the writer again, here, where nothing runs after it.
                try pool.writeWithoutTransaction { db in try Self.makeDurable(db) }
                try StoreMigrations.migrator.migrate(pool)
            }
        } catch {
            throw Self.storageError(error, "opening \(path)")
        }
    }

    /// What a commit promises (ST-1): `synchronous = FULL`, so a committed fix survives a power
    /// cut, not only the death of the process. In WAL mode FULL fsyncs the WAL at every commit.
    ///
    /// On Apple platforms `fsync` is not enough: Apple's fsync(2) says it moves the data to
    /// the drive but "the drive itself may not physically write the data ... for quite some
    /// time", and that "applications, such as databases, that require a strict ordering of
    /// writes should use F_FULLFSYNC". `fullfsync` makes SQLite's commits use it (and
    /// `checkpoint_fullfsync` its checkpoints). A fix is one commit at most every few seconds
    /// (the gate), so the flush is paid per stored fix, not per location the OS delivers.
    static func makeDurable(_ db: Database) throws {
        try db.execute(sql: "PRAGMA synchronous = FULL")
        #if canImport(Darwin)
            try db.execute(sql: "PRAGMA fullfsync = ON")
            try db.execute(sql: "PRAGMA checkpoint_fullfsync = ON")
        #endif
    }

    /// The writer connection's effective `synchronous` level (2: FULL) and `journal_mode`, read
    /// on the connection that commits: what a test or `beekon status` can check.
    func writerDurability() async throws(BeekonError) -> (synchronous: Int, journalMode: String) {
        do {
            return try await pool.writeWithoutTransaction { db in
                (
                    try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1,
                    try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? ""
                )
            }
        } catch {
            throw Self.storageError(error, "reading the writer's settings")
        }
    }

    /// Maps any error from GRDB or the file system to an actionable storage error.
    static func storageError(_ error: any Error, _ what: String) -> BeekonError {
        if let e = error as? BeekonError { return e }
        if let db = error as? DatabaseError {
            let hint: String
            switch db.resultCode {
            case .SQLITE_FULL: hint = "the disk is full; free space, nothing already stored was lost"
            case .SQLITE_READONLY: hint = "the database is read-only; check file permissions"
            case .SQLITE_CORRUPT, .SQLITE_NOTADB: hint = "the file is not a valid Beekon database (corrupt?); move it aside"
            case .SQLITE_CANTOPEN: hint = "the file cannot be opened; check the path and permissions"
            case .SQLITE_BUSY, .SQLITE_LOCKED: hint = "the database is locked by another process"
            case .SQLITE_IOERR: hint = "an I/O error occurred; check the storage device"
            default: hint = db.message ?? "\(db.resultCode)"
            }
            return .storage("\(what): \(hint) (\(db.resultCode))")
        }
        return .storage("\(what): \(error.localizedDescription)")
    }

    func read<T: Sendable>(_ what: String, _ body: @Sendable @escaping (Database) throws -> T) async throws(BeekonError) -> T {
        do { return try await pool.read(body) } catch { throw Self.storageError(error, what) }
    }

    func write<T: Sendable>(_ what: String, _ body: @Sendable @escaping (Database) throws -> T) async throws(BeekonError) -> T {
        do { return try await pool.write(body) } catch { throw Self.storageError(error, what) }
    }

    /// A transaction committed without its own fsync (`synchronous = NORMAL`): in WAL mode it
    /// is atomic, survives the death of the process (the OS holds the pages), and the next
    /// regular commit's fsync makes it durable; only a power cut before then can undo it.
    /// Used for the upload queue's bookkeeping, where such a loss costs a repeat the server
    /// dedupes: an acknowledgement undone re-sends its batch (same batch id); a batch
    /// assembly undone lets its rows go out again in a new batch, stored once by row id.
    /// Fixes and events themselves are always written with a full fsync (ST-1).
    func writeUnforced<T: Sendable>(_ what: String, _ body: @Sendable @escaping (Database) throws -> T) async throws(BeekonError) -> T {
        do {
            return try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? Self.makeDurable(db) }
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.storageError(error, what)
        }
    }

    // MARK: - Locations

    /// Stores one admitted fix durably, then trims the oldest rows beyond the cap.
    /// Returns the number of rows trimmed. With `syncOn` (uploads configured), trimmed rows
    /// that were never uploaded are counted as lost uploads (ST-3). Only the fix interpreter
    /// (`Beekon.apply(_:)`) can call it: nothing else can make a `FixWrite`.
    @discardableResult
    func insert(
        _ location: Location, events: [GeofenceEventRecord] = [], geofenceStates: [String: Bool] = [:], syncOn: Bool,
        by writer: FixWrite
    ) async throws(BeekonError) -> Int {
        let cap = rowCap
        let known = rowCount.value
        let countUnsent = syncOn
        let (count, trimmed, unsent) = try await write("storing fix \(location.id.wireString)") { db in
            try LocationRow.insert(location, db)
            // A geofence crossing: its events, its inside/outside state and its fix in one transaction.
            try Self.insertEvents(db, events, states: geofenceStates)
            var count = try known.map { $0 + 1 } ?? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location")!
            var trimmed = 0
            var unsent = 0
            if count > cap {
                (trimmed, unsent) = try Self.trimOldest(db, count - cap)
                count -= trimmed
                try Self.addCounter(db, "trimmed_rows_total", trimmed)
                if countUnsent { try Self.addCounter(db, "trimmed_unsent_total", unsent) }
            }
            return (count, trimmed, unsent)
        }
        rowCount.value = count
        if trimmed > 0 {
            logger.warning(
                "row cap reached: trimmed oldest fixes",
                metadata: [
                    "trimmed": "\(trimmed)", "cap": "\(rowCap)", "never_uploaded": "\(countUnsent ? unsent : 0)",
                ])
        }
        return trimmed
    }

    /// Deletes the `n` oldest fixes; returns how many, and how many of them were never uploaded.
    private static func trimOldest(_ db: Database, _ n: Int) throws -> (Int, Int) {
        let unsent =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM (SELECT upload_state FROM location ORDER BY ts, rowid LIMIT ?) WHERE upload_state = 0
                    """, arguments: [n]) ?? 0
        try db.execute(
            sql: """
                DELETE FROM location WHERE rowid IN (SELECT rowid FROM location ORDER BY ts, rowid LIMIT ?)
                """, arguments: [n])
        let trimmed = db.changesCount
        try pinBatchRanges(db)
        return (trimmed, unsent)
    }

    /// Forgets the cached row count (after bulk deletes).
    func invalidateRowCount() { rowCount.value = nil }

    /// Fixes with `from ≤ timestamp ≤ to`, in time order.
    func history(from: Date, to: Date) async throws(BeekonError) -> [Location] {
        let lo = WireTimestamp(from).millis
        let hi = WireTimestamp(to).millis
        return try await read("reading history") { db in
            try LocationRow.fetchLocations(db, where: "WHERE ts BETWEEN ? AND ? ORDER BY ts, rowid", arguments: [lo, hi])
        }
    }

    /// Deletes fixes older than `date` (ST-5); returns how many.
    func deleteLocations(before date: Date) async throws(BeekonError) -> Int {
        let ms = WireTimestamp(date).millis
        let n = try await write("deleting fixes") { db in
            try db.execute(sql: "DELETE FROM location WHERE ts < ?", arguments: [ms])
            let n = db.changesCount
            try Self.pinBatchRanges(db)
            return n
        }
        rowCount.value = nil
        return n
    }

    /// The last stored fix of a session (to restore the gate on resume).
    func lastLocation(session: UUID) async throws(BeekonError) -> Location? {
        try await read("reading the last fix") { db in
            try LocationRow.fetchLocations(
                db, where: "WHERE session_id = ? ORDER BY ts DESC, rowid DESC LIMIT 1", arguments: [session.wireString]
            ).first
        }
    }

    /// Age prune (ST-3): deletes fixes and geofence events older than `maxAge`; with
    /// `syncOn`, rows not yet acknowledged are exempt so an offline device can catch up.
    func pruneByAge(now: Date, maxAge: TimeInterval, syncOn: Bool) async throws(BeekonError) -> Int {
        let cutoff = WireTimestamp(now.addingTimeInterval(-maxAge)).millis
        let exempt = syncOn ? " AND upload_state <> 0" : ""
        let n = try await write("pruning old rows") { db in
            try db.execute(sql: "DELETE FROM location WHERE ts < ?" + exempt, arguments: [cutoff])
            let fixes = db.changesCount
            try Self.pinBatchRanges(db)
            try db.execute(sql: "DELETE FROM geofence_event WHERE ts < ?" + exempt, arguments: [cutoff])
            try Self.addCounter(db, "aged_rows_total", fixes)
            return fixes
        }
        if n > 0 {
            rowCount.value = nil
            logger.info("age prune removed old fixes", metadata: ["removed": "\(n)"])
        }
        return n
    }
}
