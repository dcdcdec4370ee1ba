import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// The read API's JSON and GeoJSON shapes, through the application's router (in memory).
    @Suite struct ReadAPI {
        @Test(arguments: Backend.all)
        func devicesSessionsTrackAndFixes(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withRouter(backend, now: { clock.now() }) { server, _ in
                let install = Fixtures.ids.next()
                let session = Fixtures.ids.next()
                let fixes = Fixtures.locations(5, startMillis: WireTimestamp(clock.now()).millis - 3_600_000)
                #expect(try await HTTP.upload(server, Fixtures.envelope(fixes, session: session, install: install)).status == 200)
                let devices = try await server.send("GET", "/v1/devices").json()
                let device = try #require((devices["devices"] as? [[String: Any]])?.first)
                #expect(device["install_id"] as? String == install.wireString)
                #expect(device["last_fix_at"] as? String == fixes[4].timestamp.description)
                #expect(device["stale"] as? Bool == true)  // an hour old, default threshold 15 min
                #expect((device["staleness_seconds"] as? Int ?? 0) >= 3000)
                let last = try #require(device["last_fix"] as? [String: Any])
                #expect(last["id"] as? String == fixes[4].id.wireString)
                #expect(last["session_id"] as? String == session.wireString)

                let track = try await server.send("GET", "/v1/sessions/\(session.wireString)/track")
                #expect(track.headers["content-type"] == "application/geo+json")
                let fc = try track.json()
                #expect(fc["type"] as? String == "FeatureCollection")
                let feature = try #require((fc["features"] as? [[String: Any]])?.first)
                let geometry = try #require(feature["geometry"] as? [String: Any])
                #expect(geometry["type"] as? String == "LineString")
                let coords = try #require(geometry["coordinates"] as? [[Double]])
                #expect(coords.count == 5)
                #expect(coords[0] == [fixes[0].longitude, fixes[0].latitude, 34.5])  // lon, lat order
                #expect(try await server.send("GET", "/v1/sessions/\(Fixtures.ids.next().wireString)/track").status == 404)
                #expect(try await server.send("GET", "/v1/sessions/not-a-uuid/track").status == 400)

                let from = fixes[1].timestamp.description
                let to = fixes[4].timestamp.description
                let range = try await server.send(
                    "GET", "/v1/devices/\(install.wireString)/fixes?from=\(from)&to=\(to)&limit=2"
                ).json()
                let page = try #require(range["fixes"] as? [[String: Any]])
                #expect(page.compactMap { $0["id"] as? String } == [fixes[1].id.wireString, fixes[2].id.wireString])
                let cursor = try #require(range["next_cursor"] as? String)
                let rest = try await server.send(
                    "GET", "/v1/devices/\(install.wireString)/fixes?from=\(from)&to=\(to)&limit=2&cursor=\(cursor)"
                ).json()
                #expect((rest["fixes"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [fixes[3].id.wireString])
                #expect(rest["next_cursor"] == nil)
                #expect(try await server.send("GET", "/v1/devices/\(install.wireString)/fixes?limit=0").status == 400)
            }
        }
    }
}
