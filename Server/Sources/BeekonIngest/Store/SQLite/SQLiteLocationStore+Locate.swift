import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore: LocateStore {
    package var locates: any LocateStore { self }

    static let locateColumns = """
        id, install_id, state, requested_by, created_at, expires_at, delivered_at, finished_at, reason, fix_id, fix, late_fix_id,
        pushed_at, push_error
        """

    package func insertLocate(_ r: LocateRequest, payload: String, limit: LocateRateLimit) async throws(StoreError) -> Int? {
        let retry = try await write { db -> Int? in
            // The write transaction is the only writer: the read and the insert cannot interleave with another's.
            let previous = try Int64.fetchAll(
                db, sql: "SELECT created_at FROM locate_requests WHERE install_id = ? AND created_at >= ? ORDER BY created_at",
                arguments: [r.installId.wireString, r.createdAtMillis - limit.horizonMillis])
            let check = limit.check(previous: previous, nowMillis: r.createdAtMillis)
            guard check.allowed else { return check.retryAfterSeconds }
            try db.execute(
                sql: "INSERT INTO locate_requests (\(Self.locateColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: Self.arguments(r))
            try Self.appendLocateEvent(r, payload: payload, db: db)
            return nil
        }
        // Committed: from now on this device's uploads read its requests.
        if retry == nil { openLocates.withLock { $0.mark(r.installId.wireString) } }
        return retry
    }

    package func locateRequest(id: UUID) async throws(StoreError) -> LocateRequest? {
        try await run { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.locateColumns) FROM locate_requests WHERE id = ?", arguments: [id.wireString])
                .flatMap(Self.locate)
        }
    }

    package func openLocateRequests(installId: UUID) async throws(StoreError) -> [LocateRequest] {
        let install = installId.wireString
        // Every upload asks (the 2xx carries the open requests); most devices have none.
        guard case .read(let mark) = openLocates.withLock({ $0.probe(install) }) else { return [] }
        let open = try await run { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.locateColumns) FROM locate_requests
                        WHERE install_id = ? AND state IN (\(LocateRequest.State.openSQL)) ORDER BY created_at, id
                        """), arguments: [install]
            ).compactMap(Self.locate)
        }
        if open.isEmpty, let mark { openLocates.withLock { $0.clear(install, mark: mark) } }
        return open
    }

    /// Reads which installs have an open request (after the migrations, before any upload).
    func loadOpenLocateHint() throws {
        let installs = try pool.read { db in
            try String.fetchSet(
                db, sql: "SELECT DISTINCT install_id FROM locate_requests WHERE state IN (\(LocateRequest.State.openSQL))")
        }
        openLocates.withLock { $0.load(installs) }
    }

    package func dueLocateRequests(nowMillis: Int64) async throws(StoreError) -> [LocateRequest] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.locateColumns) FROM locate_requests
                    WHERE state IN (\(LocateRequest.State.openSQL)) AND expires_at <= ? ORDER BY expires_at LIMIT 1000
                    """, arguments: [nowMillis]
            ).compactMap(Self.locate)
        }
    }

    package func updateLocate(_ r: LocateRequest, from: LocateRequest.State, payload: String?) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE locate_requests SET state = ?, delivered_at = ?, finished_at = ?, reason = ?, fix_id = ?, fix = ?,
                    late_fix_id = ?, pushed_at = ?, push_error = ? WHERE id = ? AND state = ?
                    """,
                arguments: [
                    r.state.rawValue, r.deliveredAtMillis, r.finishedAtMillis, r.reason, r.fixId?.wireString, r.fixJSON,
                    r.lateFixId?.wireString, r.pushedAtMillis, r.pushError, r.id.wireString, from.rawValue,
                ])
            guard db.changesCount == 1 else { return false }
            if let payload { try Self.appendLocateEvent(r, payload: payload, db: db) }
            return true
        }
    }

    static func appendLocateEvent(_ r: LocateRequest, payload: String, db: Database) throws {
        let at = r.finishedAtMillis ?? r.deliveredAtMillis ?? r.pushedAtMillis ?? r.createdAtMillis
        try appendEvents(
            [PendingEvent(kind: .locate, id: r.id, millis: at, payload: payload)], installId: r.installId.wireString,
            received: at, db: db)
    }

    static func arguments(_ r: LocateRequest) -> StatementArguments {
        [
            r.id.wireString, r.installId.wireString, r.state.rawValue, r.requestedBy, r.createdAtMillis, r.expiresAtMillis,
            r.deliveredAtMillis, r.finishedAtMillis, r.reason, r.fixId?.wireString, r.fixJSON, r.lateFixId?.wireString,
            r.pushedAtMillis, r.pushError,
        ]
    }

    static func locate(_ row: Row) -> LocateRequest? {
        guard let id = UUID(uuidString: row[0]), let install = UUID(uuidString: row[1]),
            let state = LocateRequest.State(rawValue: row[2])
        else { return nil }
        return LocateRequest(
            id: id, installId: install, state: state, requestedBy: row[3], createdAtMillis: row[4], expiresAtMillis: row[5],
            deliveredAtMillis: row[6], finishedAtMillis: row[7], reason: row[8],
            fixId: (row[9] as String?).flatMap { UUID(uuidString: $0) },
            fixJSON: row[10], lateFixId: (row[11] as String?).flatMap { UUID(uuidString: $0) }, pushedAtMillis: row[12],
            pushError: row[13])
    }
}

/// Locate requests, and the share flag that allows them (migration `v5-locate`).
enum SQLiteLocateSchema {
    static let v5 = """
        CREATE TABLE locate_requests (
            id TEXT PRIMARY KEY, install_id TEXT NOT NULL, state TEXT NOT NULL, requested_by TEXT NOT NULL,
            created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, delivered_at INTEGER, finished_at INTEGER,
            reason TEXT, fix_id TEXT, fix TEXT, late_fix_id TEXT);
        CREATE INDEX locate_requests_device ON locate_requests (install_id, created_at);
        CREATE INDEX locate_requests_open ON locate_requests (state, expires_at);
        ALTER TABLE shares ADD COLUMN locate INTEGER NOT NULL DEFAULT 0;
        """
}

/// Push tokens, one per install, and a locate request's push outcome (migration `v9-push`, issue 30).
enum SQLitePushSchema {
    static let v9 = """
        CREATE TABLE push_tokens (
            install_id TEXT PRIMARY KEY, provider TEXT NOT NULL, token TEXT NOT NULL, environment TEXT, topic TEXT,
            updated_at INTEGER NOT NULL);
        ALTER TABLE locate_requests ADD COLUMN pushed_at INTEGER;
        ALTER TABLE locate_requests ADD COLUMN push_error TEXT;
        """
}

/// Which installs may have an open locate request, so that the upload of a device with none
/// (nearly every upload) skips reading `locate_requests` (issue 32: that read and its thread
/// hops were about 3 % of the server's CPU at 1,000 uploads a second).
///
/// Exact because SQLite has one owner: every request is created through this store, which
/// marks the install once the request is committed. A read that finds none clears the mark,
/// unless a request was marked meanwhile (its mark number moved on), so a request committed
/// while an upload was being answered is delivered with that device's next upload at the
/// latest. A request only leaves the open states, so a cleared install stays without one until
/// it is marked again. The map holds only installs with an open request, or whose last one has
/// closed since their last upload.
struct OpenLocateHint: Sendable {
    /// What an upload of an install does.
    enum Probe: Equatable {
        /// No open request can exist: nothing to read.
        case none
        /// Read the requests; clear with this mark if none is open (nil: do not clear).
        case read(mark: UInt64?)
    }

    /// False until the open requests on disk were loaded: every upload reads meanwhile.
    private(set) var loaded = false
    private var marks: [String: UInt64] = [:]
    private var lastMark: UInt64 = 0

    /// An install got a request (after its commit).
    mutating func mark(_ install: String) {
        lastMark += 1
        marks[install] = lastMark
    }

    /// What an upload of `install` does.
    func probe(_ install: String) -> Probe {
        guard loaded else { return .read(mark: nil) }
        guard let mark = marks[install] else { return .none }
        return .read(mark: mark)
    }

    /// A read of `install` found no open request: forget it unless it was marked since `mark`.
    mutating func clear(_ install: String, mark: UInt64) {
        if marks[install] == mark { marks[install] = nil }
    }

    /// The installs with open requests on disk; marks made before stay.
    mutating func load(_ installs: Set<String>) {
        for install in installs where marks[install] == nil { mark(install) }
        loaded = true
    }

    /// How many installs are marked.
    var count: Int { marks.count }
}
