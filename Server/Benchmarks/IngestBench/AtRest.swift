import BeekonIngest
import BeekonWire
import Foundation
import GRDB
import Logging
import PostgresNIO
import PostgresTestCluster

/// `--at-rest N`: the bytes each stored fix takes on disk in each store, and where they go.
/// N fixes (100-fix uploads from 10 devices) go through the store's own `ingest`; then
/// SQLite's WAL is checkpointed and truncated and the file's size read, PostgreSQL's database
/// size is read against an empty migrated database (after `VACUUM`, so dead tuples do not
/// count), and both are split by table and index.
enum AtRest {
    struct Share {
        var name: String
        var bytes: Int64
    }

    static func sqlite(fixes: Int, logger: Logger) async throws -> (total: Int64, parts: [Share]) {
        let path = Runner.tempPath()
        defer { Runner.removeSQLite(path) }
        do {
            let store = try SQLiteLocationStore(path: path, logger: logger)
            try await store.migrate()
            _ = try await Runner.drive(store, Workload.batches(total: fixes, batchSize: 100), clients: 4)
        }
        var config = Configuration()
        config.busyMode = .timeout(30)  // the store's background checkpoint may still hold the file
        let queue = try DatabaseQueue(path: path, configuration: config)
        defer { try? queue.close() }
        let parts = try await queue.writeWithoutTransaction { db -> [Share] in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            // dbstat: every page of the file by the table or index it belongs to.
            return try Row.fetchAll(db, sql: "SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC")
                .map { Share(name: $0["name"], bytes: $0["bytes"]) }
        }
        var total: Int64 = 0
        for suffix in ["", "-wal"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? NSNumber)?.int64Value ?? 0
            total += size
        }
        return (total, parts)
    }

    static func postgres(url: String, cluster: PostgresCluster?, fixes: Int, logger: Logger) async throws -> (total: Int64, parts: [Share])
    {
        let empty = try await size(url: try Runner.freshDatabase(url, cluster), cluster: cluster, fixes: 0, logger: logger)
        let full = try await size(url: try Runner.freshDatabase(url, cluster), cluster: cluster, fixes: fixes, logger: logger)
        return (full.total - empty.total, full.parts)
    }

    private static func size(url: String, cluster: PostgresCluster?, fixes: Int, logger: Logger) async throws -> (
        total: Int64, parts: [Share]
    ) {
        let location = try PostgresLocation(url: url)
        let store = PostgresLocationStore(location: location, maximumConnections: 4, logger: logger)
        var config = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username,
            password: location.password, database: location.database, tls: .disable)
        config.options.maximumConnections = 2
        let client = PostgresClient(configuration: config, backgroundLogger: logger)
        return try await IngestServer.withServices(store.services + [client], logger: logger) {
            try await store.migrate()
            if fixes > 0 { _ = try await Runner.drive(store, Workload.batches(total: fixes, batchSize: 100), clients: 4) }
            try await client.query("VACUUM", logger: logger)
            var total: Int64 = 0
            for try await value in try await client.query("SELECT pg_database_size(current_database())", logger: logger)
                .decode(Int64.self)
            {
                total = value
            }
            var parts: [Share] = []
            let rows = try await client.query(
                """
                SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
                ORDER BY 2 DESC LIMIT 8
                """, logger: logger)
            for try await (name, bytes) in rows.decode((String, Int64).self) { parts.append(Share(name: name, bytes: bytes)) }
            return (total, parts)
        }
    }

    static func report(_ store: String, fixes: Int, _ result: (total: Int64, parts: [Share])) {
        print("\(store): \(result.total) bytes for \(fixes) fixes = \(String(format: "%.0f", Double(result.total) / Double(fixes))) B/fix")
        for p in result.parts.prefix(8) {
            print(
                "  \(p.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(String(format: "%7.1f", Double(p.bytes) / Double(fixes))) B/fix"
            )
        }
    }
}
