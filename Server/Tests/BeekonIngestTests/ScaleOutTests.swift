import BeekonIngest
import BeekonWire
import Foundation
import PostgresTestCluster
import Testing

extension Ingest {
    /// Two stateless instances on one PostgreSQL database receive the same
    /// batches at the same time; dedupe rests on the database's unique keys.
    @Suite("Scale-out: two instances on one PostgreSQL", .tags(.postgres), .skippable(.postgres)) struct ScaleOut {
        @Test func twoInstancesStoreEveryFixOnce() async throws {
            guard PostgresClusterTrait.current != nil else {
                #expect(PostgresCluster.skipped, "no PostgreSQL cluster")
                return
            }
            let db = try await Backend.postgres.freshDatabase()
            let config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
            let a = try await TestServer.start(config)
            let b = try await TestServer.start(config)
            let install = Fixtures.ids.next()
            let session = Fixtures.ids.next()
            let fixes = Fixtures.locations(1000)
            let events = (0..<20).map { i in
                WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "fence-\(i % 3)", type: i % 2 == 0 ? .enter : .exit,
                    timestamp: WireTimestamp(millis: Fixtures.base + Int64(i) * 60_000))
            }
            // 20 batches of 100 fixes, each overlapping the next by half, plus shared events.
            let batches = (0..<19).map { i in
                Fixtures.envelope(
                    Array(fixes[(i * 50)..<(i * 50 + 100)]), session: session, install: install,
                    events: Array(events[(i % 10)..<(i % 10 + 5)]))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for e in batches {
                    for server in [a, b] { group.addTask { try await HTTP.upload(server, e).status } }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 38 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            // Read back through either instance: every fix exactly once, in order.
            var all: [String] = []
            var cursor: String?
            repeat {
                let url = b.base + "/v1/devices/\(install.wireString)/fixes?limit=300" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await HTTP.send("GET", url).json()
                all += (page["fixes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                cursor = page["next_cursor"] as? String
            } while cursor != nil
            #expect(all == fixes.map(\.id.wireString))
            let sessions = try await HTTP.send("GET", a.base + "/v1/devices/\(install.wireString)/sessions").json()
            let list = sessions["sessions"] as? [[String: Any]] ?? []
            #expect(list.count == 1)
            #expect(list.first?["fix_count"] as? Int == 1000)
            #expect(list.first?["geofence_event_count"] as? Int == 14)
            try await a.stop()
            try await b.stop()
        }
    }
}
