import BeekonGzip
import BeekonPrimitives
import BeekonTesting
import BeekonWire
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresTestCluster
import Testing

@testable import BeekonIngest

extension Ingest {
    /// The same request never gets a 5xx on one store and a 2xx or 4xx on the other: generated
    /// envelopes whose free-text fields carry what one store might keep and the other refuse
    /// (U+0000 above all: SQLite stores it, PostgreSQL's `text` cannot, and answered 503 with
    /// Retry-After, which the SDK retries for ever with the device's queue behind it) go to an
    /// application on SQLite and one on PostgreSQL; both must answer the same status, and
    /// what both stored must read back the same.
    @Suite(.tags(.postgres), .enabled(if: !PostgresCluster.skipped)) struct StoreDifferential {
        static let seed: UInt64 = 0x5EED_0047

        /// Text a field may be given: ordinary, edge-of-Unicode, control characters, U+0000.
        static let texts = [
            "ordinary", "Anna's iPhone", "caf\u{E9} \u{1F30D}", "tab\there", "line\nbreak", "\u{7F}del", "\u{0}", "nul\u{0}inside",
            "trailing\u{0}", "\u{1}\u{2}\u{1B}[0m", "\u{FEFF}bom", "\u{10FFFF}",
        ]

        /// One generated envelope: a few fixes, maybe events and extras, text fields drawn from `texts`.
        static func envelope(_ rng: inout SeededRandom) -> WireEnvelope {
            func text() -> String { texts[Int.random(in: 0..<texts.count, using: &rng)] }
            func maybe() -> Bool { Bool.random(using: &rng) }
            var locations = Fixtures.locations(Int.random(in: 1...3, using: &rng))
            if maybe() { locations[0].privacyZone = text() }
            var e = Fixtures.envelope(locations, extras: maybe() ? [text(): text()] : [:])
            if maybe() { e.device.model = text() }
            if maybe() { e.device.platform = text() }
            if maybe() {
                e.geofenceEvents = [
                    WireGeofenceEvent(id: Fixtures.ids.next(), geofenceId: text(), type: .enter, timestamp: locations[0].timestamp)
                ]
            }
            if maybe() {
                e.proximityEvents = [
                    WireProximityEvent(
                        id: Fixtures.ids.next(), region: text(), uuid: Fixtures.ids.next(), major: 1, minor: 2, scanner: text(),
                        type: .enter, timestamp: locations[0].timestamp, distance: 1.5)
                ]
            }
            return e
        }

        @Test(.timeLimit(.minutes(10)))
        func theSameEnvelopeGetsTheSameAnswerAndRowsOnBothStores() async throws {
            let sqliteDB = try await Backend.sqlite.freshDatabase()
            defer { sqliteDB.remove() }
            let postgresDB = try await Backend.postgres.freshDatabase()
            let sqliteApp = try IngestServer.buildApplication(Self.config(sqliteDB), logger: testLogger)
            let postgresApp = try IngestServer.buildApplication(Self.config(postgresDB), logger: testLogger)
            var rng = SeededRandom(seed: Self.seed)
            let envelopes = (0..<120).map { _ in Self.envelope(&rng) }
            let statuses = Locked<[Int: Int]>([:])
            try await sqliteApp.test(.router) { lite in
                try await postgresApp.test(.router) { pg in
                    for (i, e) in envelopes.enumerated() {
                        let body = ByteBuffer(bytes: WireJSONWriter.encode(e))
                        let headers: HTTPFields = [.contentType: "application/json"]
                        let a = try await lite.execute(uri: "/v1/locations", method: .post, headers: headers, body: body)
                        let b = try await pg.execute(uri: "/v1/locations", method: .post, headers: headers, body: body)
                        #expect(
                            a.status == b.status, "envelope \(i): SQLite \(a.status), PostgreSQL \(b.status): \(String(buffer: b.body))")
                        #expect(a.status.code < 500 && b.status.code < 500, "envelope \(i): a 5xx")
                        statuses.withLock { $0[Int(a.status.code), default: 0] += 1 }
                        guard a.status == .ok, b.status == .ok else { continue }
                        let path = "/v1/devices/\(e.device.installId.wireString)/fixes?limit=100"
                        let rowsA = try await lite.execute(uri: path, method: .get)
                        let rowsB = try await pg.execute(uri: path, method: .get)
                        #expect(try Self.fixes(rowsA.body) == Self.fixes(rowsB.body), "envelope \(i): rows read back differ")
                    }
                    // Share labels, the other free text a client stores.
                    let share = ByteBuffer(string: #"{"all":true,"label":"nul\u0000label"}"#)
                    let sa = try await lite.execute(
                        uri: "/v1/shares", method: .post, headers: [.contentType: "application/json"], body: share)
                    let sb = try await pg.execute(
                        uri: "/v1/shares", method: .post, headers: [.contentType: "application/json"], body: share)
                    #expect(sa.status == sb.status && sa.status.code == 400, "share label with U+0000: \(sa.status) / \(sb.status)")
                }
            }
            let seen = statuses.value
            #expect(seen[200, default: 0] > 0 && seen[422, default: 0] > 0, "both outcomes reached: \(seen)")
        }

        static func config(_ db: TestDatabase) -> IngestConfiguration {
            IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
        }

        /// The fixes of a read answer, each as its JSON object's canonical text (server-side
        /// receive times left out: the two stores received at different instants).
        static func fixes(_ body: ByteBuffer) throws -> [String] {
            let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            let fixes = json?["fixes"] as? [[String: Any]] ?? []
            return try fixes.map { fix in
                var f = fix
                f.removeValue(forKey: "received_at")
                return String(decoding: try JSONSerialization.data(withJSONObject: f, options: [.sortedKeys]), as: UTF8.self)
            }
        }
    }
}
