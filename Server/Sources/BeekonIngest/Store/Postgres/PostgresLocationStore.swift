import BeekonWire
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// The production store: PostgreSQL through a `PostgresClient` pool (a Service
/// in the app's ServiceGroup). Several server instances may share one database;
/// dedupe rests on the primary keys, and rows are inserted in id order so that
/// concurrent overlapping batches wait for each other instead of deadlocking.
package final class PostgresLocationStore: LocationStore, TokenStore, ShareStore {
    let client: PostgresClient
    let logger: Logger
    /// Longest a request waits for the database before it is answered 503.
    let operationTimeout: Duration
    /// Concurrent uploads' shared transactions; nil: one transaction per upload.
    let group: GroupCommit<PostgresIngestUpload, PostgresIngestUpload.Outcome>?

    /// Creates a store for `location`; nothing connects until the client service runs.
    /// An operation that cannot finish within `operationTimeout` (database down or
    /// unreachable: the pool would otherwise keep waiting for a connection) fails.
    /// With `groupCommit` (the default), concurrent uploads share one transaction and one
    /// commit (see `GroupCommit` and `commitGroup`).
    package init(
        location: PostgresLocation, maximumConnections: Int = 20, operationTimeout: Duration = .seconds(10),
        groupCommit: Bool = true, logger: Logger
    ) {
        let tls: PostgresClient.Configuration.TLS
        switch location.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var config = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username,
            password: location.password, database: location.database, tls: tls)
        config.options.maximumConnections = maximumConnections
        config.options.connectTimeout = .seconds(5)
        client = PostgresClient(configuration: config, backgroundLogger: logger)
        self.logger = logger
        self.operationTimeout = operationTimeout
        let writer = Writer(client: client, logger: logger, operationTimeout: operationTimeout)
        group = groupCommit ? GroupCommit { uploads in await writer.commitGroup(uploads) } : nil
    }

    /// What the store's writes need, apart from the store (the group-commit writer is made
    /// before the store exists).
    struct Writer: Sendable {
        let client: PostgresClient
        let logger: Logger
        let operationTimeout: Duration
    }

    var writer: Writer { Writer(client: client, logger: logger, operationTimeout: operationTimeout) }

    package var services: [any Service] { [BoundedShutdown(client, grace: .seconds(10), logger: logger)] }
    package var tokens: any TokenStore { self }
    package var shares: any ShareStore { self }

    package func migrate() async throws(StoreError) {
        do {
            try await client.withTransaction(logger: logger) { conn in
                // One instance migrates at a time; the others wait and then find the version set.
                try await conn.query("SELECT pg_advisory_xact_lock(74657001)", logger: logger)
                try await conn.query("CREATE TABLE IF NOT EXISTS beekon_schema (version INT PRIMARY KEY)", logger: logger)
                var current = 0
                for try await v in try await conn.query("SELECT COALESCE(MAX(version), 0) FROM beekon_schema", logger: logger).decode(
                    Int.self)
                {
                    current = v
                }
                for (version, statements) in PostgresSchema.versions where version > current {
                    for statement in statements {
                        try await conn.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await conn.query(
                        PostgresQuery(unsafeSQL: "INSERT INTO beekon_schema (version) VALUES (\(version))"), logger: logger)
                }
            }
        } catch {
            throw .migrationFailed(Self.describe(error))
        }
    }

    package func ping() async throws(StoreError) {
        try await perform { conn in try await conn.query("SELECT 1", logger: self.logger) }
    }

    package func ingest(_ batch: IngestBatch) async throws(StoreError) -> IngestResult {
        let e = batch.envelope
        try await insertProximity(batch)
        let upload = PostgresIngestUpload(batch)
        let (fresh, stored, eventsStored) = if let group { try await group.submit(upload) } else { try await writer.single(upload) }
        guard fresh == 1 else {
            return IngestResult(
                duplicateBatch: true, locationsStored: 0, locationsDuplicate: e.locations.count,
                eventsStored: 0, eventsDuplicate: e.geofenceEvents.count)
        }
        return IngestResult(
            duplicateBatch: false, locationsStored: Int(stored), locationsDuplicate: e.locations.count - Int(stored),
            eventsStored: Int(eventsStored), eventsDuplicate: e.geofenceEvents.count - Int(eventsStored))
    }

    /// A UUID's bytes as two big-endian integers: tuples compare like PostgreSQL's `uuid`
    /// (and like the lowercase text form), without making strings.
    static func orderKey(_ id: UUID) -> (UInt64, UInt64) {
        withUnsafeBytes(of: id.uuid) {
            (
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// Runs `body` in a transaction, retrying a few times on deadlock / serialization failure.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(StoreError) -> T {
        try await retryingConflicts { try await self.client.withTransaction(logger: self.logger) { conn in try await body(conn) } }
    }

    /// Runs `operation` with the deadline, retrying a few times on deadlock / serialization
    /// failure, mapping errors to `StoreError`.
    func retryingConflicts<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws(StoreError) -> T {
        try await writer.retryingConflicts(operation)
    }

    /// Runs `body` on a pooled connection, mapping errors to `StoreError`.
    @discardableResult
    func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws(StoreError) -> T {
        do {
            return try await withDeadline { try await self.client.withConnection { conn in try await body(conn) } }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Runs `operation`, failing with `StoreError.unavailable` after `operationTimeout`, even
    /// when the operation does not answer its cancellation (see `OperationTimeout`).
    func withDeadline<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await writer.withDeadline(operation)
    }

    static func storeError(_ error: any Error) -> StoreError {
        if let e = error as? StoreError { return e }
        if let p = error as? PSQLError, p.serverInfo == nil { return .unavailable(describe(error)) }
        return .queryFailed(describe(error))
    }

    static func describe(_ error: any Error) -> String {
        if let p = error as? PSQLError {
            if let info = p.serverInfo {
                return "\(info[.sqlState] ?? "?"): \(info[.message] ?? "")"
            }
            return "\(p.code)\(p.underlying.map { ": \($0)" } ?? "")"
        }
        return "\(error)"
    }
}

/// The PostgreSQL schema; timestamps are Unix milliseconds (BIGINT) as in the SQLite store.
enum PostgresSchema {
    /// Every schema step in order (``SchemaStep``) with its frozen version number.
    static let versions: [(Int, [String])] = SchemaStep.allCases.map { ($0.postgresVersion, statements(for: $0)) }

    /// PostgreSQL's statements for each schema step.
    static func statements(for step: SchemaStep) -> [String] {
        if let column = step.addedFixColumn { return [column.addColumn(.postgres)] }
        return switch step {
        case .base: v1
        case .events: v2
        case .deviceStatus: v3
        case .proximity: PostgresLocationStore.proximitySchema
        case .locate: PostgresLocateSchema.v5
        case .trackOverview: PostgresOverviewSchema.v7
        case .deviceIdentity: PostgresIdentitySchema.v8
        case .push: PostgresPushSchema.v9
        case .partitions: PostgresPartitionSchema.v10
        case .shareScope: PostgresLocationStore.shareScopeSchema
        case .credentials: PostgresIdentitySchema.v12
        case .circles: PostgresCircleSchema.v13
        case .nudges: PostgresNudgeSchema.v14
        // A step that adds a fix column, rendered above from its one description.
        default: []
        }
    }

    /// Device status: the interval a device declared, and the last published status.
    static let v3 = [
        "ALTER TABLE batches ADD COLUMN expected_interval INT",
        "CREATE TABLE device_status (install_id UUID PRIMARY KEY, status TEXT NOT NULL, changed_at BIGINT NOT NULL)",
    ]

    /// The event log (`seq` from its own sequence; see `PostgresIngestStatement`).
    static let v2 = [
        """
        CREATE TABLE events (
            seq BIGSERIAL PRIMARY KEY, kind TEXT NOT NULL, install_id UUID NOT NULL,
            ts BIGINT NOT NULL, received_at BIGINT NOT NULL, payload TEXT NOT NULL)
        """,
        "CREATE INDEX events_received ON events (received_at)",
        "CREATE TABLE IF NOT EXISTS server_marks (name TEXT PRIMARY KEY, value BIGINT NOT NULL)",
        """
        CREATE TABLE shares (
            id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, label TEXT, devices TEXT,
            created_at BIGINT NOT NULL, expires_at BIGINT, history_seconds BIGINT, live BOOLEAN NOT NULL,
            precision_m DOUBLE PRECISION, revoked_at BIGINT)
        """,
        """
        CREATE TABLE share_access (
            id BIGSERIAL PRIMARY KEY, share_id TEXT NOT NULL, at BIGINT NOT NULL,
            what TEXT NOT NULL, path TEXT NOT NULL, outcome TEXT NOT NULL)
        """,
        "CREATE INDEX share_access_share ON share_access (share_id, id)",
    ]

    static let v1 = [
        """
        CREATE TABLE batches (
            batch_id UUID PRIMARY KEY, session_id UUID NOT NULL, install_id UUID NOT NULL,
            sent_at BIGINT NOT NULL, received_at BIGINT NOT NULL, platform TEXT NOT NULL,
            sdk_version TEXT NOT NULL, model TEXT, extras JSONB, principal TEXT,
            location_count INT NOT NULL, event_count INT NOT NULL)
        """,
        "CREATE INDEX batches_install ON batches (install_id, received_at)",
        """
        CREATE TABLE locations (
            id UUID PRIMARY KEY, install_id UUID NOT NULL, session_id UUID NOT NULL, batch_id UUID NOT NULL,
            ts BIGINT NOT NULL, latitude DOUBLE PRECISION NOT NULL, longitude DOUBLE PRECISION NOT NULL,
            accuracy DOUBLE PRECISION, speed DOUBLE PRECISION, bearing DOUBLE PRECISION, altitude DOUBLE PRECISION,
            trigger TEXT NOT NULL, motion TEXT NOT NULL, is_mock BOOLEAN NOT NULL,
            activity TEXT, quality TEXT, received_at BIGINT NOT NULL)
        """,
        "CREATE INDEX locations_device_time ON locations (install_id, ts, id)",
        "CREATE INDEX locations_session_time ON locations (session_id, ts, id)",
        """
        CREATE TABLE geofence_events (
            id UUID PRIMARY KEY, install_id UUID NOT NULL, session_id UUID NOT NULL, batch_id UUID NOT NULL,
            geofence_id TEXT NOT NULL, type TEXT NOT NULL, ts BIGINT NOT NULL, received_at BIGINT NOT NULL)
        """,
        "CREATE INDEX geofence_events_session ON geofence_events (session_id, ts)",
        """
        CREATE TABLE refresh_tokens (
            token_hash TEXT PRIMARY KEY, subject TEXT NOT NULL, family TEXT NOT NULL,
            issued_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, replaced_by TEXT,
            revoked BOOLEAN NOT NULL DEFAULT FALSE)
        """,
        "CREATE INDEX refresh_tokens_family ON refresh_tokens (family)",
        "CREATE TABLE server_keys (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ]
}
