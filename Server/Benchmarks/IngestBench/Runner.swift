import BeekonIngest
import BeekonWire
import Foundation
import PostgresTestCluster
import GRDB
import Logging
import PostgresNIO

/// The measured operations; every run uses a fresh database.
enum Runner {
    struct DedupeResult {
        var seconds: Double
        var replay: Double
    }

    static let clock = ContinuousClock()

    /// Sends `batches` through `store.ingest` from `clients` concurrent tasks; returns seconds.
    static func drive(_ store: any LocationStore, _ batches: [WireEnvelope], clients: Int) async throws -> Double {
        let received = WireTimestamp(Date())
        let start = clock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for c in 0..<clients {
                group.addTask {
                    for i in stride(from: c, to: batches.count, by: clients) {
                        _ = try await store.ingest(IngestBatch(envelope: batches[i], receivedAt: received))
                    }
                }
            }
            try await group.waitForAll()
        }
        return (clock.now - start).seconds
    }

    static func postgresIngest(url: String, cluster: PostgresCluster?, batches: [WireEnvelope], clients: Int, logger: Logger) async throws
        -> DedupeResult
    {
        let location = try PostgresLocation(url: try freshDatabase(url, cluster))
        let store = PostgresLocationStore(location: location, maximumConnections: clients, logger: logger)
        return try await IngestServer.withServices(store.services, logger: logger) {
            try await store.migrate()
            let first = try await drive(store, batches, clients: clients)
            let replay = try await drive(store, batches, clients: clients)
            return DedupeResult(seconds: first, replay: replay)
        }
    }

    /// COPY (text format) of the same rows, one COPY per batch, into a table shaped like `locations`
    /// (the columns of ``copyColumns``: a column added later stays NULL, as in a fix without it).
    static func postgresCopy(url: String, cluster: PostgresCluster?, batches: [WireEnvelope], clients: Int, logger: Logger) async throws
        -> Double
    {
        let location = try PostgresLocation(url: try freshDatabase(url, cluster))
        let store = PostgresLocationStore(location: location, maximumConnections: clients, logger: logger)
        var config = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username,
            password: location.password, database: location.database, tls: .disable)
        config.options.maximumConnections = clients
        let client = PostgresClient(configuration: config, backgroundLogger: logger)
        return try await IngestServer.withServices(store.services + [client], logger: logger) {
            try await store.migrate()
            try await client.query("CREATE TABLE copy_target (LIKE locations INCLUDING ALL)", logger: logger)
            let received = WireTimestamp(Date()).millis
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for c in 0..<clients {
                    group.addTask {
                        for i in stride(from: c, to: batches.count, by: clients) {
                            let text = copyText(batches[i], received: received)
                            try await client.withConnection { conn in
                                try await conn.copyFrom(table: "copy_target", columns: copyColumns, logger: logger) { writer in
                                    try await writer.write(ByteBuffer(string: text))
                                }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            return (clock.now - start).seconds
        }
    }

    /// The columns ``copyText`` writes, in its order.
    static let copyColumns = [
        "id", "install_id", "session_id", "batch_id", "ts", "latitude", "longitude", "accuracy", "speed", "bearing", "altitude",
        "trigger", "motion", "is_mock", "activity", "quality", "received_at", "privacy_zone",
    ]

    static func copyText(_ e: WireEnvelope, received: Int64) -> String {
        var s = ""
        s.reserveCapacity(e.locations.count * 200)
        func opt(_ v: Double?) -> String { v.map { "\($0)" } ?? "\\N" }
        for l in e.locations {
            s += "\(l.id.wireString)\t\(e.device.installId.wireString)\t\(e.sessionId.wireString)\t\(e.batchId.wireString)\t"
            s += "\(l.timestamp.millis)\t\(l.latitude)\t\(l.longitude)\t\(opt(l.accuracy))\t\(opt(l.speed))\t\(opt(l.bearing))\t"
            s += "\(opt(l.altitude))\t\(l.trigger.rawValue)\t\(l.motion.rawValue)\t\(l.isMock)\t\(l.activity?.rawValue ?? "\\N")\t"
            s += "\(l.quality?.rawValue ?? "\\N")\t\(received)\t\(l.privacyZone ?? "\\N")\n"
        }
        return s
    }

    static func sqliteIngest(batches: [WireEnvelope], clients: Int, logger: Logger) async throws -> Double {
        let path = tempPath()
        defer { removeSQLite(path) }
        let store = try SQLiteLocationStore(path: path, logger: logger)
        try await store.migrate()
        let level = try await store.durability().synchronous
        guard level == 2 else { throw RunnerFailure("the store's writer is at synchronous \(level), not FULL (2)") }
        return try await drive(store, batches, clients: clients)
    }

    /// Plain prepared INSERTs into a table without unique keys, one transaction per batch, same WAL/FULL settings.
    static func sqliteRaw(batches: [WireEnvelope]) throws -> Double {
        let path = tempPath()
        defer { removeSQLite(path) }
        var config = Configuration()
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: path, configuration: config)
        // GRDB's pool resets its writer to NORMAL after `prepareDatabase` (no fsync per commit in
        // WAL mode): set it again and check it, so both arms pay the same fsyncs.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let level = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        guard level == 2 else { throw RunnerFailure("the raw arm's writer is at synchronous \(level ?? -1), not FULL (2)") }
        try pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE raw (id TEXT, install_id TEXT, session_id TEXT, batch_id TEXT, ts INTEGER, latitude REAL,
                    longitude REAL, accuracy REAL, speed REAL, bearing REAL, altitude REAL, trigger TEXT, motion TEXT,
                    is_mock INTEGER, activity TEXT, quality TEXT, received_at INTEGER)
                    """)
        }
        let received = WireTimestamp(Date()).millis
        let start = clock.now
        for e in batches {
            try pool.write { db in
                let st = try db.cachedStatement(sql: "INSERT INTO raw VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
                for l in e.locations {
                    try st.execute(arguments: [
                        l.id.wireString, e.device.installId.wireString, e.sessionId.wireString,
                        e.batchId.wireString, l.timestamp.millis, l.latitude, l.longitude, l.accuracy,
                        l.speed, l.bearing, l.altitude, l.trigger.rawValue, l.motion.rawValue, l.isMock,
                        l.activity?.rawValue, l.quality?.rawValue, received,
                    ])
                }
            }
        }
        return (clock.now - start).seconds
    }

    static func freshDatabase(_ url: String, _ cluster: PostgresCluster?) throws -> String {
        guard let cluster else { return url }
        return cluster.url(try cluster.createDatabase())
    }

    static func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("ingest-bench-\(UUID().uuidString).sqlite").path
    }

    static func removeSQLite(_ path: String) {
        for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A benchmark arm that would not measure what it claims (e.g. a writer without its fsync).
struct RunnerFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
