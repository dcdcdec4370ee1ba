import BeekonIngest
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Viewer credentials and scoped shares over real HTTP (BY-1, IN-6).
    @Suite struct Shares {
        static let admin = ["X-API-Key": "admin-k"]

        /// A server with auth required, the admin key `admin-k`, and `clock` as its clock.
        static func withAdminServer(
            _ backend: Backend, _ clock: TestClock, _ body: @Sendable (TestServer, TestDatabase) async throws -> Void
        ) async throws {
            try await withServer(
                backend,
                configure: {
                    $0.authMode = .required
                    $0.apiKeys = ["admin-k"]
                }, now: { clock.now() }, body)
        }

        /// Fixes from `minutesAgo` minutes before `now` (the server's clock), one a minute.
        static func recent(_ count: Int, minutesAgo: Int, install: UUID, session: UUID = Fixtures.ids.next(), now: Date) -> WireEnvelope {
            let start = WireTimestamp(now).millis - Int64(minutesAgo) * 60_000
            return Fixtures.envelope(Fixtures.locations(count, startMillis: start, stepMillis: 60_000), session: session, install: install)
        }

        static func createShare(_ server: some TestTransport, _ json: String) async throws -> (id: String, token: String) {
            let r = try await server.send("POST", "/v1/shares", body: Array(json.utf8), headers: admin)
            #expect(r.status == 201, "\(r.text)")
            let o = try r.json()
            let share = try #require(o["share"] as? [String: Any])
            #expect((o["url"] as? String)?.contains("/v1/live?share=bks_") == true)
            return (try #require(share["id"] as? String), try #require(o["token"] as? String))
        }

        /// Digits after the decimal point of a JSON number.
        static func decimals(_ value: Any?) -> Int {
            guard let n = value as? NSNumber else { return 99 }
            let text = "\(n.doubleValue)"
            guard !text.contains("e"), let dot = text.firstIndex(of: ".") else { return 0 }
            let frac = text[text.index(after: dot)...]
            return frac == "0" ? 0 : frac.count
        }

        /// Every latitude has at most 2 and every longitude at most 1 decimal (1,000 m at 52.5° N),
        /// accuracy is at least 1,000 m.
        static func coarse(_ fix: [String: Any]) -> Bool {
            decimals(fix["latitude"]) <= 2 && decimals(fix["longitude"]) <= 1 && ((fix["accuracy"] as? NSNumber)?.doubleValue ?? 0) >= 1000
        }

        /// IN-6: a share for device A never sees device B nor fixes outside its history window, and its
        /// coordinates are coarsened on every endpoint and on the stream; device tokens get 403; every
        /// use is recorded; /metrics needs the admin key when auth is required.
        @Test(arguments: Backend.all)
        func shareScopeWindowAndPrecisionOnEveryEndpoint(_ backend: Backend) async throws {
            let clock = TestClock()
            try await Self.withAdminServer(backend, clock) { server, db in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                let sessionA = Fixtures.ids.next()
                let old = Self.recent(2, minutesAgo: 180, install: a, session: sessionA, now: clock.now())
                let fresh = Self.recent(3, minutesAgo: 30, install: a, session: sessionA, now: clock.now())
                let other = Self.recent(3, minutesAgo: 30, install: b, now: clock.now())
                for e in [old, fresh, other] { #expect(try await HTTP.upload(server, e, headers: Self.admin).status == 200) }
                let share = try await Self.createShare(
                    server,
                    """
                    {"devices":["\(a.wireString)"],"live":true,"precision_m":1000,"history_seconds":3600,"label":"grandma"}
                    """)
                let auth = ["Authorization": "Bearer \(share.token)"]

                let devices = try await HTTP.send("GET", server.base + "/v1/devices", headers: auth)
                let list = try #require(try devices.json()["devices"] as? [[String: Any]])
                #expect(list.map { $0["install_id"] as? String } == [a.wireString])
                #expect(Self.coarse(try #require(list.first?["last_fix"] as? [String: Any])))

                let fixes = try await HTTP.send("GET", server.base + "/v1/devices/\(a.wireString)/fixes", headers: auth)
                let page = try #require(try fixes.json()["fixes"] as? [[String: Any]])
                #expect(page.map { $0["id"] as? String } == fresh.locations.map { $0.id.wireString })
                #expect(page.allSatisfy(Self.coarse))
                #expect(try await HTTP.send("GET", server.base + "/v1/devices/\(b.wireString)/fixes", headers: auth).status == 404)
                #expect(try await HTTP.send("GET", server.base + "/v1/devices/\(b.wireString)/sessions", headers: auth).status == 404)
                #expect(try await HTTP.send("GET", server.base + "/v1/devices/\(a.wireString)/sessions", headers: auth).status == 200)
                #expect(
                    try await HTTP.send("GET", server.base + "/v1/sessions/\(other.sessionId.wireString)/track", headers: auth).status
                        == 404)
                // Attack: another device's session id with any cursor must not page through its
                // timeline by next_cursor (a 200 with empty coordinates and B's fix times did).
                let probe = try await HTTP.send(
                    "GET",
                    server.base + "/v1/sessions/\(other.sessionId.wireString)/track?limit=1&cursor=0_00000000-0000-0000-0000-000000000000",
                    headers: auth)
                #expect(probe.status == 404, "a session of a device outside the share is not found, whatever the cursor")
                #expect(!probe.text.contains("next_cursor"))
                let track = try await HTTP.send("GET", server.base + "/v1/sessions/\(sessionA.wireString)/track", headers: auth)
                let geometry = try #require((try track.json()["features"] as? [[String: Any]])?.first?["geometry"] as? [String: Any])
                let points = try #require(geometry["coordinates"] as? [[Any]])
                #expect(points.count == 3)
                #expect(points.allSatisfy { Self.decimals($0[0]) <= 1 && Self.decimals($0[1]) <= 2 })

                // The stream: only A's fixes inside the window, coarsened; then live ones, still only A's.
                let streamed = try await Live.fixes(server.base + "/v1/live", headers: auth, after: "0", count: 3)
                #expect(streamed.compactMap(Live.fixID) == fresh.locations.map { $0.id.wireString })
                #expect(streamed.map(Live.object).allSatisfy(Self.coarse))
                let later = Self.recent(2, minutesAgo: 5, install: a, now: clock.now())
                #expect(
                    try await HTTP.upload(server, Self.recent(2, minutesAgo: 5, install: b, now: clock.now()), headers: Self.admin).status
                        == 200)
                #expect(try await HTTP.upload(server, later, headers: Self.admin).status == 200)
                let resumed = try await Live.fixes(server.base + "/v1/live?share=\(share.token)", after: streamed.last?.id, count: 2)
                #expect(resumed.compactMap(Live.fixID) == later.locations.map { $0.id.wireString })
                #expect(resumed.map(Live.object).allSatisfy(Self.coarse))

                // Device tokens only upload; no credential is 401; /metrics is admin-only.
                let device = try await AuthHTTP.seed(db, subject: "phone-1")
                let bearer = ["Authorization": "Bearer \(device.accessToken)"]
                #expect(try await HTTP.send("GET", server.base + "/v1/live", headers: bearer).status == 403)
                #expect(try await HTTP.send("GET", server.base + "/v1/devices", headers: bearer).status == 403)
                #expect(
                    try await HTTP.send("POST", server.base + "/v1/shares", body: Array("{\"all\":true}".utf8), headers: bearer).status
                        == 403)
                #expect(try await HTTP.send("GET", server.base + "/v1/live").status == 401)
                #expect(try await HTTP.send("GET", server.base + "/metrics").status == 401)
                #expect(try await HTTP.send("GET", server.base + "/metrics", headers: Self.admin).status == 200)

                // A share without --live may read but not stream.
                let noLive = try await Self.createShare(server, "{\"all\":true}")
                #expect(
                    try await HTTP.send("GET", server.base + "/v1/live", headers: ["Authorization": "Bearer \(noLive.token)"]).status == 403
                )
                #expect(
                    try await HTTP.send("GET", server.base + "/v1/devices", headers: ["Authorization": "Bearer \(noLive.token)"]).status
                        == 200)

                let access = try await HTTP.send("GET", server.base + "/v1/shares/access?share_id=\(share.id)", headers: Self.admin)
                let records = try #require(try access.json()["access"] as? [[String: Any]])
                let what = Set(records.compactMap { $0["what"] as? String })
                #expect(what == ["devices", "fixes", "sessions", "track", "live"])
                #expect(records.allSatisfy { $0["outcome"] as? String == "granted" })
            }
        }

        /// IN-6: revoking a share closes its open stream and refuses it from then on (403); an expired
        /// share is refused and its open stream closed too.
        @Test(arguments: Backend.all)
        func revokedAndExpiredSharesAreClosedAndRefused(_ backend: Backend) async throws {
            let db = try await backend.freshDatabase()
            defer { db.remove() }
            let clock = TestClock()
            var config = IngestConfiguration(
                database: db.location, authMode: .required, apiKeys: ["admin-k"],
                databaseTimeoutSeconds: testDatabaseTimeout)
            config.port = 0
            let server = try await TestServer.start(config, now: { clock.now() })
            do {
                try await Self.closeOnRevokeAndExpiry(server, clock)
            } catch {
                try await server.stop()
                throw error
            }
            try await server.stop()
        }

        static func closeOnRevokeAndExpiry(_ server: TestServer, _ clock: TestClock) async throws {
            for (index, end) in ["revoke", "expire"].enumerated() {
                let share = try await Self.createShare(server, "{\"all\":true,\"live\":true,\"expires_in_seconds\":7200}")
                let viewer = LiveViewer(
                    url: URL(string: server.base + "/v1/live")!, headers: ["Authorization": "Bearer \(share.token)"],
                    backoff: LiveBackoff(initial: .milliseconds(50)))
                var seen: [String] = []
                for await event in viewer.events() {
                    switch event {
                    case .connected:
                        seen.append("connected")
                        if end == "revoke" {
                            #expect(
                                try await HTTP.send("DELETE", server.base + "/v1/shares/\(share.id)", headers: Self.admin).status == 200)
                        } else {
                            clock.advance(by: .seconds(7201))
                        }
                    case .disconnected: seen.append("disconnected")
                    case .refused(let status): seen.append("refused \(status)")
                    case .message, .heartbeat: break
                    }
                }
                #expect(seen == ["connected", "disconnected", "refused 403"], "share \(index) (\(end))")
            }
        }
    }
}
