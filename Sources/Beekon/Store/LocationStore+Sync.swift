import BeekonWire
import Foundation
import GRDB

/// A batch whose membership is persisted before the first send (SY-6): a retry,
/// also after a crash, carries the same id, rows, `sent_at` and extras.
struct PendingBatch: Sendable, Hashable {
    var id: UUID
    var sessionId: UUID
    var createdAt: Date
    var extras: [String: String]
    var locations: [Location]
    var events: [GeofenceEventRecord]
    var attempts: Int
    /// Beacon proximity events (BY-5), in the envelope's optional `proximity_events`.
    var proximity: [ProximityRecord] = []
}

/// A stored geofence event as the store sees it.
struct GeofenceEventRecord: Sendable, Hashable {
    var id: UUID
    var geofenceId: String
    var transition: GeofenceTransition
    var timestamp: Date
    var sessionId: UUID?

    var wire: WireGeofenceEvent {
        WireGeofenceEvent(id: id, geofenceId: geofenceId, type: transition, timestamp: WireTimestamp(timestamp))
    }
}

extension LocationStore {
    static let maxEventsPerBatch = 1000

    /// The open batch if one exists (a retry), else a new one built in one transaction:
    /// the session of the oldest pending fix, its oldest `limit` pending fixes, plus the
    /// pending geofence events (SY-4). Nil when nothing is pending.
    /// The oldest open batch (a retry: same id, rows and `sent_at`), else a new batch of up to
    /// `limit` pending fixes of one session plus pending geofence events, persisted before it
    /// is returned. Batches in `excluding` (the one in flight while the next is prepared) and
    /// their rows are left out. Nil when nothing is pending. Committed unforced (see
    /// `writeUnforced`): membership survives a process death, as SY-6 needs.
    func nextBatch(
        limit: Int, now: Date, excluding: Set<UUID> = [],
        makeID: @Sendable @escaping () -> UUID
    ) async throws(BeekonError) -> PendingBatch? {
        try await writeUnforced("assembling an upload batch") { db in
            try Self.assemble(db, limit: limit, now: now, excluding: excluding, makeID: makeID)
        }
    }

    /// Marks `accepted` uploaded (as `acknowledge`) and assembles the next batch (as
    /// `nextBatch`) in one transaction, so a drain writes once per batch. The mark runs in
    /// a savepoint: when it fails it alone is undone and returned — its batch stays open
    /// and out of the assembly — and the assembly goes on.
    func nextBatch(
        limit: Int, now: Date, excluding: Set<UUID>, makeID: @Sendable @escaping () -> UUID,
        acknowledging accepted: UUID?, keepLocations: Bool
    ) async throws(BeekonError) -> (batch: PendingBatch?, markFailure: BeekonError?) {
        guard let accepted else { return (try await nextBatch(limit: limit, now: now, excluding: excluding, makeID: makeID), nil) }
        let result = try await writeUnforced("acknowledging an upload and assembling the next batch") { db in
            var markFailure: BeekonError?
            do {
                try db.inSavepoint {
                    _ = try Self.markUploaded(db, accepted, keepLocations: keepLocations)
                    return .commit
                }
            } catch {
                markFailure = Self.storageError(error, "acknowledging an upload")
            }
            let batch = try Self.assemble(db, limit: limit, now: now, excluding: excluding.union([accepted]), makeID: makeID)
            return (batch, markFailure)
        }
        if !keepLocations { invalidateRowCount() }
        return result
    }

    /// The body of `nextBatch`, inside the caller's transaction.
    private static func assemble(
        _ db: Database, limit: Int, now: Date, excluding: Set<UUID>, makeID: () -> UUID
    ) throws -> PendingBatch? {
        let excluded = excluding.map(\.wireString)
        let notExcluded = excluded.isEmpty ? "" : "id NOT IN (\(excluded.map { _ in "?" }.joined(separator: ",")))"
        // Events of an excluded batch stay out; a pending event pointing at any other batch id
        // cannot have a live batch (the open-batch lookup below would have returned it).
        let freeRow =
            excluded.isEmpty ? "" : "AND (batch_id IS NULL OR batch_id NOT IN (\(excluded.map { _ in "?" }.joined(separator: ","))))"
        let open = try Row.fetchOne(
            db,
            sql: """
                SELECT * FROM upload_batch \(notExcluded.isEmpty ? "" : "WHERE " + notExcluded) ORDER BY created_at, id LIMIT 1
                """, arguments: StatementArguments(excluded))
        if let open { return try Self.loadBatch(db, open) }
        let fixes = try Self.nextFixRange(db, limit: limit)
        let eventCount =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM geofence_event WHERE upload_state = 0 \(freeRow)
                    """, arguments: StatementArguments(excluded)) ?? 0
        let proximityCount = try Self.pendingProximityCount(db, freeRow: freeRow, excluded: excluded)
        guard fixes != nil || eventCount > 0 || proximityCount > 0 else { return nil }
        let sessionID =
            try fixes?.session
            ?? String.fetchOne(
                db, sql: "SELECT session_id FROM geofence_event WHERE upload_state = 0 AND session_id IS NOT NULL ORDER BY ts LIMIT 1")
            ?? String.fetchOne(db, sql: "SELECT id FROM session ORDER BY started_at DESC LIMIT 1")
            ?? Self.meta(db, MetaKey.installID)!
        let batchID = makeID().wireString
        // The extras in effect now (SY-9), as `setExtras` stored them.
        let extrasJSON = try Self.meta(db, "extras") ?? "{}"
        // The fixes join as a row range: one row written, not one per fix and its index entries.
        try db.execute(
            sql: "INSERT INTO upload_batch(id, session_id, created_at, extras, first_row, last_row) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [batchID, sessionID, WireTimestamp(now).millis, extrasJSON, fixes?.first, fixes?.last])
        try db.execute(
            sql: """
                UPDATE geofence_event SET batch_id = ? WHERE id IN (
                    SELECT id FROM geofence_event WHERE upload_state = 0 \(freeRow) ORDER BY ts, id LIMIT ?)
                """, arguments: StatementArguments([batchID]) + StatementArguments(excluded) + [Self.maxEventsPerBatch])
        try Self.attachProximity(db, batchID: batchID, freeRow: freeRow, excluded: excluded)
        return try Self.loadBatch(db, Row.fetchOne(db, sql: "SELECT * FROM upload_batch WHERE id = ?", arguments: [batchID])!)
    }

    /// The fixes of the next batch (SY-4): the oldest session with pending fixes outside every
    /// open batch, and its first `limit` such fixes in row order, as the rowid range they span.
    /// All open batches are out of the assembly here (else the open-batch lookup returned one),
    /// so the range starts at the session's first pending row outside their ranges and stops
    /// before the next one: the pending fixes of the session inside it are exactly the batch.
    private static func nextFixRange(_ db: Database, limit: Int) throws -> (session: String, first: Int64, last: Int64)? {
        var spans: [String: [(first: Int64, last: Int64)]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT session_id, first_row, last_row FROM upload_batch WHERE first_row IS NOT NULL") {
            spans[row[0], default: []].append((row[1], row[2]))
        }
        // Sessions by start time, each probed through the pending index (a scan of `location`
        // would walk every acknowledged row first); rows of a session missing from `session` last.
        let known = try String.fetchAll(
            db,
            sql: """
                SELECT id FROM session WHERE EXISTS (
                    SELECT 1 FROM location INDEXED BY location_pending_rows WHERE session_id = session.id AND upload_state = 0)
                ORDER BY started_at, id
                """)
        for session in known {
            if let range = try freeRun(db, session: session, spans: spans[session] ?? [], limit: limit) { return range }
        }
        // Sessions missing from `session`, in id order: one index seek per distinct session
        // (a `SELECT DISTINCT` here walked every pending row on every batch — 40 % of a
        // 100,000-fix drain's CPU, benchmark P3-cpu).
        var after: String?
        while let session = try nextPendingSession(db, after: after) {
            after = session
            let known = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM session WHERE id = ?)", arguments: [session]) ?? false
            if known { continue }
            if let range = try freeRun(db, session: session, spans: spans[session] ?? [], limit: limit) { return range }
        }
        return nil
    }

    /// The smallest session id above `after` (or the smallest at all) with a pending fix: one
    /// seek in the pending index.
    private static func nextPendingSession(_ db: Database, after: String?) throws -> String? {
        guard let after else {
            return try String.fetchOne(
                db,
                sql: """
                    SELECT session_id FROM location INDEXED BY location_pending_rows
                    WHERE upload_state = 0 ORDER BY session_id LIMIT 1
                    """)
        }
        return try String.fetchOne(
            db,
            sql: """
                SELECT session_id FROM location INDEXED BY location_pending_rows
                WHERE upload_state = 0 AND session_id > ? ORDER BY session_id LIMIT 1
                """, arguments: [after])
    }

    /// The first run of up to `limit` pending fixes of `session` outside `spans` (the open batches' ranges).
    private static func freeRun(
        _ db: Database, session: String, spans: [(first: Int64, last: Int64)], limit: Int
    ) throws -> (session: String, first: Int64, last: Int64)? {
        var from = Int64.min
        while true {
            guard
                let first = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT rowid FROM location INDEXED BY location_pending_rows
                        WHERE session_id = ? AND upload_state = 0 AND rowid >= ? ORDER BY rowid LIMIT 1
                        """, arguments: [session, from])
            else { return nil }
            if let span = spans.first(where: { $0.first <= first && first <= $0.last }) {
                guard span.last < Int64.max else { return nil }
                from = span.last + 1
                continue
            }
            let bound = spans.filter { $0.first > first }.map(\.first).min().map { $0 - 1 } ?? Int64.max
            let last = try Int64.fetchOne(
                db,
                sql: """
                    SELECT max(rowid) FROM (SELECT rowid FROM location INDEXED BY location_pending_rows
                    WHERE session_id = ? AND upload_state = 0 AND rowid BETWEEN ? AND ? ORDER BY rowid LIMIT ?)
                    """, arguments: [session, first, bound, limit])
            return (session, first, last ?? first)
        }
    }

    /// The pending fixes of an open batch, as a `location` table hint and condition: its row
    /// range within its session, or — for a batch assembled before `v8-batch-range` — the rows
    /// tagged with its id. Nil when the batch has no fixes (or is not open).
    private static func members(_ db: Database, batch id: String) throws -> (
        hint: String, condition: String, arguments: StatementArguments
    )? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM upload_batch WHERE id = ?", arguments: [id]) else { return nil }
        return members(row)
    }

    private static let taggedHint = "INDEXED BY location_batch"

    private static func members(_ row: Row) -> (hint: String, condition: String, arguments: StatementArguments)? {
        if row["rows_tagged"] as Bool {
            return (taggedHint, "batch_id = ? AND upload_state = 0", [row["id"] as String])
        }
        guard let first = row["first_row"] as Int64?, let last = row["last_row"] as Int64? else { return nil }
        // The rowid range, not an index on session_id or ts: a 1,000-row range of the table's b-tree.
        return ("NOT INDEXED", "rowid BETWEEN ? AND ? AND session_id = ? AND upload_state = 0", [first, last, row["session_id"] as String])
    }

    /// After fixes are deleted (row cap, age prune, `deleteLocations`), keeps each open batch's
    /// range ending on a stored row (or empty), so the rowid of every later fix — one more than
    /// the largest stored — stays above every open range: a fix stored after a batch's
    /// assembly never joins it, also not into a range whose last rows were deleted.
    static func pinBatchRanges(_ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE upload_batch SET last_row = COALESCE(
                    (SELECT max(rowid) FROM location WHERE rowid BETWEEN upload_batch.first_row AND upload_batch.last_row),
                    first_row - 1)
                WHERE first_row IS NOT NULL
                """)
    }

    private static func loadBatch(_ db: Database, _ row: Row) throws -> PendingBatch {
        let id: String = row["id"]
        let locations =
            try members(row).map {
                try LocationRow.fetchLocations(db, where: "\($0.hint) WHERE \($0.condition) ORDER BY ts, rowid", arguments: $0.arguments)
            } ?? []
        let events = try Row.fetchAll(
            db,
            sql: """
                SELECT * FROM geofence_event WHERE batch_id = ? AND upload_state = 0 ORDER BY ts, id
                """, arguments: [id]
        ).compactMap(eventRecord)
        let extrasJSON: String = row["extras"]
        var batch = PendingBatch(
            id: UUID(wire: id)!, sessionId: UUID(wire: row["session_id"]) ?? UUID(uuid: UUID_NULL_BYTES),
            createdAt: WireTimestamp(millis: row["created_at"]).date,
            extras: (try? JSONDecoder().decode([String: String].self, from: Data(extrasJSON.utf8))) ?? [:],
            locations: locations, events: events, attempts: row["attempts"])
        batch.proximity = try batchProximity(db, batchID: id)
        return batch
    }

    static func eventRecord(_ row: Row) -> GeofenceEventRecord? {
        guard let id = UUID(wire: row["id"]), let t = GeofenceTransition(rawValue: row["type"]) else { return nil }
        return GeofenceEventRecord(
            id: id, geofenceId: row["geofence_id"], transition: t, timestamp: WireTimestamp(millis: row["ts"]).date,
            sessionId: (row["session_id"] as String?).flatMap(UUID.init(wire:)))
    }

    /// 2xx: the rows leave the queue at once (ST-4); they stay in history unless `keepLocations` is false.
    /// Committed unforced (see `writeUnforced`): losing it only repeats the upload.
    func acknowledge(_ batch: UUID, keepLocations: Bool) async throws(BeekonError) -> Int {
        let n = try await writeUnforced("acknowledging an upload") { db in
            try Self.markUploaded(db, batch, keepLocations: keepLocations)
        }
        if !keepLocations { invalidateRowCount() }
        return n
    }

    /// The body of `acknowledge`, inside the caller's transaction; returns the fixes marked.
    private static func markUploaded(_ db: Database, _ batch: UUID, keepLocations: Bool) throws -> Int {
        let id = batch.wireString
        var n = 0
        if let m = try members(db, batch: id) {
            if keepLocations {
                let untag = m.hint == Self.taggedHint ? ", batch_id = NULL" : ""
                try db.execute(sql: "UPDATE location \(m.hint) SET upload_state = 1\(untag) WHERE \(m.condition)", arguments: m.arguments)
            } else {
                try db.execute(sql: "DELETE FROM location \(m.hint) WHERE \(m.condition)", arguments: m.arguments)
            }
            n = db.changesCount
        }
        try db.execute(sql: "UPDATE geofence_event SET upload_state = 1, batch_id = NULL WHERE batch_id = ?", arguments: [id])
        try Self.settleProximity(db, batchID: id, state: 1)
        try db.execute(sql: "DELETE FROM upload_batch WHERE id = ?", arguments: [id])
        return n
    }

    /// 400/422: the batch leaves the queue and its rows are set aside for inspection (SY-7).
    func reject(_ batch: PendingBatch, status: Int, at now: Date) async throws(BeekonError) {
        try await write("setting a rejected batch aside") { db in
            let id = batch.id.wireString
            var locations = 0
            if let m = try Self.members(db, batch: id) {
                try db.execute(sql: "UPDATE location \(m.hint) SET upload_state = 2 WHERE \(m.condition)", arguments: m.arguments)
                locations = db.changesCount
            }
            try db.execute(sql: "UPDATE geofence_event SET upload_state = 2 WHERE batch_id = ? AND upload_state = 0", arguments: [id])
            let events = db.changesCount + (try Self.settleProximity(db, batchID: id, state: 2))
            try db.execute(
                sql: """
                    INSERT INTO rejected_batch(id, session_id, rejected_at, status, locations, geofence_events)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING
                    """, arguments: [id, batch.sessionId.wireString, WireTimestamp(now).millis, status, locations, events])
            try db.execute(sql: "DELETE FROM upload_batch WHERE id = ?", arguments: [id])
        }
    }

    /// The server refused the batch id as reused with other content (409): the id is spent,
    /// so the rows return to the queue and go out under a new batch id on the next attempt.
    func release(_ batch: PendingBatch) async throws(BeekonError) {
        try await write("re-batching rows refused under a reused batch id") { db in
            let id = batch.id.wireString
            // A range batch's fixes return with the batch row's deletion; tagged ones (v8) are untagged.
            for table in ["location", "geofence_event", "proximity_event"] {
                try db.execute(sql: "UPDATE \(table) SET batch_id = NULL WHERE batch_id = ? AND upload_state = 0", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM upload_batch WHERE id = ?", arguments: [id])
        }
    }

    /// A failed attempt: the batch stays (same id, same rows) with its attempt count and last outcome.
    func recordAttempt(_ batch: UUID, status: Int?, error: String?) async throws(BeekonError) {
        try await write("recording an upload attempt") { db in
            try db.execute(
                sql: "UPDATE upload_batch SET attempts = attempts + 1, last_status = ?, last_error = ? WHERE id = ?",
                arguments: [status, error, batch.wireString])
        }
    }

    /// Fixes and events waiting for upload (including those in an unacknowledged batch).
    func pendingCount() async throws(BeekonError) -> Int {
        try await read("counting pending rows") { db in
            try Int.fetchOne(
                db,
                sql:
                    "SELECT (SELECT COUNT(*) FROM location WHERE upload_state = 0) + (SELECT COUNT(*) FROM geofence_event WHERE upload_state = 0) + (SELECT COUNT(*) FROM proximity_event WHERE upload_state = 0)"
            ) ?? 0
        }
    }

    /// Fixes waiting for upload (not events): the threshold trigger's measure.
    func pendingLocationCount() async throws(BeekonError) -> Int {
        try await read("counting pending fixes") { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location WHERE upload_state = 0") ?? 0
        }
    }

    /// Rows set aside after a 400/422, oldest first.
    func rejectedLocations() async throws(BeekonError) -> [Location] {
        try await read("reading rejected rows") { db in
            try LocationRow.fetchLocations(db, where: "WHERE upload_state = 2 ORDER BY ts, rowid")
        }
    }

    /// Persists extras attached to every later batch.
    func setExtras(_ extras: [String: String]) async throws(BeekonError) {
        // The server refuses a batch whose extras break schema v1's limits (422, dropped): refuse them here.
        if let problem = WireLimits.extrasProblem(extras) { throw .invalidConfiguration("\(problem.path): \(problem.reason)") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: (try? encoder.encode(extras)) ?? Data("{}".utf8), as: UTF8.self)
        try await write("saving extras") { db in try Self.setMeta(db, "extras", extras.isEmpty ? nil : json) }
    }

    /// Persists the last sync outcome for `beekon status`.
    func setLastSyncOutcome(_ text: String) async throws(BeekonError) {
        try await write("saving the sync outcome") { db in try Self.setMeta(db, "last_sync_outcome", text) }
    }
}
