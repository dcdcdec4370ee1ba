import BeekonGzip
import BeekonIngest
import BeekonWire
import Foundation
import HummingbirdTesting
import Logging
import PostgresTestCluster
import Testing

/// Runs `body` against a live server on a fresh database of `backend`; `liveHeartbeats` ticks
/// its live streams' heartbeat (nil: its timer).
func withServer(
    _ backend: Backend, configure: (inout IngestConfiguration) -> Void = { _ in },
    now: @escaping @Sendable () -> Date = { Date() }, liveHeartbeats: AsyncStream<Void>? = nil, logger: Logger = testLogger,
    _ body: @Sendable (TestServer, TestDatabase) async throws -> Void
) async throws {
    try await withTestConfiguration(backend, configure: configure) { config, db in
        let server = try await TestServer.start(config, now: now, liveHeartbeats: liveHeartbeats, logger: logger)
        do {
            try await body(server, db)
        } catch {
            try await server.stop()
            throw error
        }
        try await server.stop()
    }
}

/// The in-memory twin of ``withServer(_:configure:now:liveHeartbeats:logger:_:)``: `body`'s
/// requests go to the application's router through Hummingbird's `.router` test framework (no
/// socket), on a fresh database of `backend`, with the application's services and start-up work
/// (migrations, the signing key) run as on a server. For tests whose subject is a route's answer
/// (status, role, bound, share scope, JSON), not the connection.
func withRouter(
    _ backend: Backend, configure: (inout IngestConfiguration) -> Void = { _ in },
    now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = testLogger,
    _ body: @Sendable (RouterClient, TestDatabase) async throws -> Void
) async throws {
    try await withTestConfiguration(backend, configure: configure) { config, db in
        let app = try IngestServer.buildApplication(config, logger: logger, now: now)
        try await app.test(.router) { client in try await body(RouterClient(client: client), db) }
    }
}

/// A fresh database of `backend` and a configuration on it (auth off), as `configure` leaves it;
/// the database goes when `body` returns.
func withTestConfiguration(
    _ backend: Backend, configure: (inout IngestConfiguration) -> Void,
    _ body: (IngestConfiguration, TestDatabase) async throws -> Void
) async throws {
    let db = try await backend.freshDatabase()
    defer { db.remove() }
    var config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
    configure(&config)
    try await body(config, db)
}

extension Ingest {
    /// Every status-code case of the ingest endpoint, through the application's router (in memory).
    @Suite struct HTTPIngest {
        static func raw(_ server: some TestTransport, _ body: [UInt8], gzip: Bool = true, encoding: String? = nil) async throws
            -> HTTPResult
        {
            var headers = ["Content-Type": "application/json"]
            if let encoding { headers["Content-Encoding"] = encoding } else if gzip { headers["Content-Encoding"] = "gzip" }
            return try await server.send("POST", "/v1/locations", body: gzip ? Gzip.deflate(body) : body, headers: headers)
        }

        static func json(_ e: WireEnvelope) -> String { String(decoding: WireJSONWriter.encode(e), as: UTF8.self) }

        /// The route on SQLite; the stores' dedupe is StoreContract's (`storesABatchAndSkipsAReplay`,
        /// `overlappingBatchesStoreEachFixOnce`, `concurrentReplaysStoreOnce`), once per backend.
        @Test(arguments: [Backend.sqlite])
        func acceptsGzipAndIdentityAndDedupes(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                let e = Fixtures.envelope(Fixtures.locations(100))
                let first = try await HTTP.upload(server, e)
                #expect(first.status == 200)
                #expect(try first.json()["locations_stored"] as? Int == 100)
                let replay = try await Self.raw(server, [UInt8](WireJSONWriter.encode(e)), gzip: false)
                #expect(replay.status == 200)
                #expect(try replay.json()["duplicate_batch"] as? Bool == true)
                let fixes = try await server.send("GET", "/v1/devices/\(e.device.installId.wireString)/fixes?limit=1000")
                #expect(fixes.status == 200)
                #expect((try fixes.json()["fixes"] as? [Any])?.count == 100)
            }
        }

        /// The route on SQLite; the column's round trip is StoreContract's
        /// (`everyFieldAndNullRoundTripsAndEventsDedupeAcrossBatches`), once per backend.
        @Test("BY-4: a fix replaced by a privacy zone's centre keeps the zone's id at the server", arguments: [Backend.sqlite])
        func privacyZoneIsStoredAndServed(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                var locations = Fixtures.locations(2)
                locations[0].privacyZone = "home"
                let e = Fixtures.envelope(locations)
                #expect(try await HTTP.upload(server, e).status == 200)
                let read = try await server.send("GET", "/v1/devices/\(e.device.installId.wireString)/fixes?limit=10")
                let fixes = try #require(try read.json()["fixes"] as? [[String: Any]])
                let zones = Dictionary(uniqueKeysWithValues: fixes.map { ($0["id"] as! String, $0["privacy_zone"] as? String) })
                #expect(zones == [locations[0].id.wireString: "home", locations[1].id.wireString: nil])
            }
        }

        @Test(arguments: Backend.all)
        func badInputGets4xxAndTheServerStaysHealthy(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                let good = Self.json(Fixtures.envelope(Fixtures.locations(2)))
                func variant(_ from: String, _ to: String) -> [UInt8] {
                    let s = good.replacingOccurrences(of: from, with: to)
                    precondition(s != good, "fixture did not contain \(from)")
                    return Array(s.utf8)
                }
                var cases: [(String, [UInt8], Bool, [Int])] = [
                    ("not JSON", Array("hello".utf8), true, [400]),
                    ("empty body", [], false, [400]),
                    ("JSON array", Array("[]".utf8), true, [400]),
                    ("wrong type", variant("\"is_mock\":false", "\"is_mock\":\"no\""), true, [400]),
                    ("missing field", variant("\"batch_id\":", "\"batch_idx\":"), true, [400]),
                    ("null value", variant("\"is_mock\":false", "\"is_mock\":null"), true, [400]),
                    ("NaN as string", variant("\"latitude\":52.52,", "\"latitude\":\"NaN\","), true, [400]),
                    ("NaN literal", variant("\"latitude\":52.52,", "\"latitude\":NaN,"), true, [400]),
                    ("huge number", variant("\"latitude\":52.52,", "\"latitude\":1e999,"), true, [400, 422]),
                    ("latitude out of range", variant("\"latitude\":52.52,", "\"latitude\":91,"), true, [422]),
                    ("bad enum", variant("\"trigger\":\"interval\"", "\"trigger\":\"teleport\""), true, [422]),
                    ("bad timestamp", variant("\"timestamp\":\"2026", "\"timestamp\":\"1999"), false, [200, 422]),
                    ("schema version 2", variant("\"schema_version\":1", "\"schema_version\":2"), true, [422]),
                    ("bad uuid", variant("\"session_id\":\"", "\"session_id\":\"x"), true, [422]),
                ]
                // Garbage: 10 MB of random bytes as identity and as "gzip".
                var rng = SystemRandomNumberGenerator()
                let garbage = (0..<10_000_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
                cases.append(("10 MB garbage identity", garbage, false, [400]))
                for (name, body, gzip, expected) in cases {
                    let r = try await Self.raw(server, body, gzip: gzip)
                    #expect(expected.contains(r.status), "\(name): got \(r.status) \(r.text.prefix(200))")
                }
                let garbageGzip = try await Self.raw(server, garbage, gzip: false, encoding: "gzip")
                #expect(garbageGzip.status == 400)
                let gz = Gzip.deflate(Array(good.utf8))
                let truncated = try await server.send(
                    "POST", "/v1/locations", body: Array(gz.dropLast(9)),
                    headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"])
                #expect(truncated.status == 400, "truncated gzip: \(truncated.text)")
                let trailing = try await server.send(
                    "POST", "/v1/locations", body: gz + [1, 2, 3],
                    headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"])
                #expect(trailing.status == 400)
                let brotli = try await Self.raw(server, Array(good.utf8), gzip: false, encoding: "br")
                #expect(brotli.status == 415)
                let unknownFields = variant("\"is_mock\":false", "\"is_mock\":false,\"future\":{\"x\":[1,2]}")
                let withExtra = String(decoding: unknownFields, as: UTF8.self)
                    .replacingOccurrences(of: "\"schema_version\":1", with: "\"schema_version\":1,\"new_root\":true")
                #expect(try await Self.raw(server, Array(withExtra.utf8)).status == 200)
                let health = try await server.send("GET", "/healthz")
                #expect(health.status == 200)
                let metrics = try await server.send("GET", "/metrics")
                #expect(metrics.text.contains("beekon_ingest_rejected_total{status=\"400\"}"))
                #expect(metrics.text.contains("beekon_ingest_batches_total{result=\"stored\"} 1"))
            }
        }

        @Test(arguments: Backend.all)
        func oversizedBodiesAndGzipBombsGet413(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                // 200 MiB of zeros inflate from ~200 KB: must be refused at the decompressed-size cap.
                let bomb = Gzip.deflate([UInt8](repeating: 0, count: 200 * 1024 * 1024), level: 9)
                #expect(bomb.count < 1_000_000)
                let r = try await server.send(
                    "POST", "/v1/locations", body: bomb,
                    headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"])
                #expect(r.status == 413)
                let big = [UInt8](repeating: 0x20, count: 13 * 1024 * 1024)
                let tooBig = try await server.send(
                    "POST", "/v1/locations", body: big, headers: ["Content-Type": "application/json"])
                #expect(tooBig.status == 413)
                #expect(try await server.send("GET", "/healthz").status == 200)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(3))).status == 200)
            }
        }

        @Test func databaseFailureAnswers503WithRetryAfter() async throws {
            guard let cluster = PostgresClusterTrait.current else {
                #expect(PostgresCluster.skipped, "no PostgreSQL cluster")
                return
            }
            let db = try await Backend.postgres.freshDatabase()
            guard case .postgres(let location) = db.location else { return }
            // A dropped database fails at once; the deadline only has to outlast a loaded CI machine
            // for the first upload (5 s was once too short there).
            let store = PostgresLocationStore(location: location, operationTimeout: .seconds(30), logger: testLogger)
            let server = try await TestServer.start(IngestConfiguration(database: db.location, authMode: .off), store: store)
            #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(3))).status == 200)
            try await blocking { try cluster.dropDatabase(db.name) }  // the database goes away under the running server
            let r = try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(3)))
            #expect(r.status == 503)
            #expect(r.headers["retry-after"] == "5")
            #expect(try await server.send("GET", "/healthz").status == 503)
            try await server.stop()
        }
    }
}
