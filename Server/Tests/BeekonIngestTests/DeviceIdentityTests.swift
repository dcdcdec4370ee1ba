import Beekon
import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 28: device credentials act only for their own install; enrollment and revocation;
    /// the role table (SECURITY.md) route by route for admin, device and share (XR-2, IN-5, BY-7).
    @Suite struct DeviceIdentity {
        static let admin = ["X-API-Key": "admin-k"]
        /// The app backend's enroller key (issue 52).
        static let enroller = ["Authorization": "Bearer enroller-k"]

        static func required(_ config: inout IngestConfiguration) {
            config.authMode = .required
            config.apiKeys = ["admin-k"]
            config.enrollerKeys = ["enroller-k"]
        }

        /// A grant bound to `install` (as `beekon-ingest issue-token --install-id`), or unbound
        /// (bound on first use) when `install` is nil.
        static func seed(_ db: TestDatabase, subject: String, install: UUID?) async throws -> TokenGrant {
            let store = try IngestServer.makeStore(
                IngestConfiguration(database: db.location, databaseTimeoutSeconds: testDatabaseTimeout), logger: testLogger)
            return try await IngestServer.withServices(store.services, logger: testLogger) {
                let tokens = TokenService(store: store.tokens, accessTTLSeconds: 900, refreshTTLSeconds: 3600)
                try await tokens.loadKey()
                return try await tokens.issue(subject: subject, installId: install)
            }
        }

        static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

        static func locate(_ server: some TestTransport, _ install: UUID) async throws -> String {
            let r = try await server.send("POST", "/v1/devices/\(install.wireString)/locate", headers: admin)
            #expect(r.status == 202, "\(r.text)")
            return try #require(try r.json()["id"] as? String)
        }

        static func state(_ server: some TestTransport, _ install: UUID, _ request: String) async throws -> String? {
            try await server.send("GET", "/v1/devices/\(install.wireString)/locate/\(request)", headers: admin).json()["state"]
                as? String
        }

        /// The attacks of issue 28's finding 2, each with device A's own credential against device B.
        @Test("XR-2: a device credential cannot upload as, read the commands of, or answer for another install", arguments: Backend.all)
        func deviceCannotActForAnotherInstall(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Self.required) { server, db in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                let grant = try await Self.seed(db, subject: "phone-a", install: a)
                let asA = Self.bearer(grant.accessToken)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: asA).status == 200)
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: b), headers: Self.admin).status == 200)

                // Upload as B.
                let forged = try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: b), headers: asA)
                #expect(forged.status == 403)
                #expect(try forged.json()["error"] as? String == "wrong_install")

                // Read B's commands (which would mark them delivered).
                let request = try await Self.locate(server, b)
                let commands = try await server.send("GET", "/v1/devices/\(b.wireString)/commands?wait=0", headers: asA)
                #expect(commands.status == 403)
                #expect(try await Self.state(server, b, request) == "pending")

                // Answer B's request with a forged fix (an upload claiming B) or refuse it.
                var fix = Fixtures.locations(1)
                fix[0].locateRequestId = UUID(uuidString: request)
                #expect(try await HTTP.upload(server, Fixtures.envelope(fix, install: b), headers: asA).status == 403)
                let refuse = try await server.send(
                    "POST", "/v1/devices/\(b.wireString)/locate/\(request)/answer",
                    body: Array(#"{"outcome":"refused","reason":"nope"}"#.utf8), headers: asA)
                #expect(refuse.status == 403)
                #expect(try await Self.state(server, b, request) == "pending")

                // Its own install still works, and B's real credential still can.
                #expect(try await server.send("GET", "/v1/devices/\(a.wireString)/commands?wait=0", headers: asA).status == 200)
                let grantB = try await Self.seed(db, subject: "phone-b", install: b)
                let asB = Self.bearer(grantB.accessToken)
                #expect(try await server.send("GET", "/v1/devices/\(b.wireString)/commands?wait=0", headers: asB).status == 200)
                #expect(try await Self.state(server, b, request) == "delivered")
            }
        }

        @Test("XR-2: a token issued without an install is bound to the first install it acts for", arguments: Backend.all)
        func unboundTokenBindsOnFirstUse(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Self.required) { server, db in
                let a = Fixtures.ids.next()
                let grant = try await Self.seed(db, subject: "truck-9", install: nil)
                let auth = Self.bearer(grant.accessToken)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: auth).status == 200)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: auth).status == 200)
                let other = try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1)), headers: auth)
                #expect(other.status == 403)
                // The binding outlives the access token: the refreshed one is bound too.
                let refreshed = try await server.send(
                    "POST", "/oauth/token",
                    body: Array("grant_type=refresh_token&refresh_token=\(grant.refreshToken)".utf8))
                let access = try #require(try refreshed.json()["access_token"] as? String)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1)), headers: Self.bearer(access)).status == 403)
            }
        }

        @Test(
            "XR-2: a token issued without an install cannot bind to an install another credential holds, or one an admin revoked",
            arguments: Backend.all)
        func unboundTokenCannotAdoptAHeldOrRevokedInstall(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Self.required) { server, db in
                let (held, revoked, free) = (Fixtures.ids.next(), Fixtures.ids.next(), Fixtures.ids.next())
                let owner = try await Self.seed(db, subject: "phone-held", install: held)
                let gone = try await Self.seed(db, subject: "phone-gone", install: revoked)
                #expect(
                    try await server.send("POST", "/v1/devices/\(revoked.wireString)/revoke", headers: Self.admin).status == 200
                )
                // The attack: an unbound credential's first use claims the victim's install.
                let thief = Self.bearer(try await Self.seed(db, subject: "thief", install: nil).accessToken)
                let commands = try await server.send("GET", "/v1/devices/\(held.wireString)/commands?wait=0", headers: thief)
                #expect(commands.status == 403, "an unbound token took over an enrolled install: \(commands.text)")
                #expect(try commands.json()["error"] as? String == "wrong_install")
                let push = try await server.send(
                    "PUT", "/v1/devices/\(held.wireString)/push-token",
                    body: Array(#"{"platform":"apns","token":"00"}"#.utf8), headers: thief)
                #expect(push.status == 403)
                let upload = try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: revoked), headers: thief)
                #expect(upload.status == 401 || upload.status == 403, "an unbound token revived a revoked install: \(upload.text)")
                // The owner still acts for its install, the revoked one stays revoked, and the
                // unbound token still binds to an install nobody holds.
                let own = try await server.send(
                    "GET", "/v1/devices/\(held.wireString)/commands?wait=0", headers: Self.bearer(owner.accessToken))
                #expect(own.status == 200)
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: revoked), headers: Self.bearer(gone.accessToken)
                    )
                    .status == 401)
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: free), headers: thief).status == 200)
            }
        }

        static func enroll(_ server: some TestTransport, code: String, install: UUID) async throws -> HTTPResult {
            try await server.send(
                "POST", "/oauth/token",
                body: Array("grant_type=enrollment_code&code=\(code)&install_id=\(install.wireString)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
        }

        static func newCode(_ server: some TestTransport, _ body: String = "") async throws -> String {
            let r = try await server.send("POST", "/v1/enrollments", body: Array(body.utf8), headers: admin)
            #expect(r.status == 201, "\(r.text)")
            #expect(r.headers["cache-control"] == "no-store")
            return try #require(try r.json()["code"] as? String)
        }

        /// Found by schemathesis: an explicit null was accepted as "absent".
        @Test("IN-5: an enrollment spec with a null or mistyped field is refused, not defaulted")
        func enrollmentSpecIsTyped() async throws {
            try await withRouter(.sqlite, configure: Self.required) { server, _ in
                for body in [#"{"label":null}"#, #"{"uses":null}"#, #"{"ttl_seconds":"60"}"#, #"[]"#] {
                    let r = try await server.send("POST", "/v1/enrollments", body: Array(body.utf8), headers: Self.admin)
                    #expect(r.status == 400, "\(body) → \(r.status)")
                }
                _ = try await Self.newCode(server, #"{"uses":2,"ttl_seconds":60,"label":"fleet"}"#)
            }
        }

        @Test("IN-5: an enrollment code is exchanged once for tokens bound to the install; revocation ends them", arguments: Backend.all)
        func enrollRefreshAndRevoke(_ backend: Backend) async throws {
            // The server's clock is frozen: it measures the command long-poll's wait, so nothing
            // but the revocation can end that poll (no real-time window in this test).
            let clock = TestClock()
            try await withRouter(backend, configure: Self.required, now: { clock.now() }) { server, _ in
                let a = Fixtures.ids.next()
                let code = try await Self.newCode(server, #"{"uses":1,"ttl_seconds":3600,"label":"fleet"}"#)
                let enrolled = try await Self.enroll(server, code: code, install: a)
                #expect(enrolled.status == 200, "\(enrolled.text)")
                let grant = try enrolled.json()
                let access = try #require(grant["access_token"] as? String)
                let refresh = try #require(grant["refresh_token"] as? String)
                // Once: a second install cannot use the code, and the install cannot enrol twice.
                let again = try await Self.enroll(server, code: code, install: Fixtures.ids.next())
                #expect(again.status == 400)
                #expect(try again.json()["error"] as? String == "invalid_grant")
                let twice = try await Self.enroll(server, code: try await Self.newCode(server), install: a)
                #expect(twice.status == 400)
                // A bad code, and a bad install id.
                #expect(try await Self.enroll(server, code: "ben1.nope", install: Fixtures.ids.next()).status == 400)
                let badInstall = try await server.send(
                    "POST", "/oauth/token", body: Array("grant_type=enrollment_code&code=\(code)&install_id=x".utf8))
                #expect(try badInstall.json()["error"] as? String == "invalid_request")

                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: Self.bearer(access)).status
                        == 200)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1)), headers: Self.bearer(access)).status == 403)
                // Refresh keeps the binding (the SDK's AuthConfig path).
                let rotated = try await server.send(
                    "POST", "/oauth/token", body: Array("grant_type=refresh_token&refresh_token=\(refresh)".utf8))
                #expect(rotated.status == 200)
                let access2 = try #require(try rotated.json()["access_token"] as? String)
                let refresh2 = try #require(try rotated.json()["refresh_token"] as? String)
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: Self.bearer(access2))
                        .status == 200)

                // A command long-poll held by the device ends when it is revoked: revoked once the
                // poll holds its hub subscription (`beekon_live_viewers`), and on the frozen server
                // clock its 60 s wait never runs out, so only the revocation can answer it.
                let poll = Task {
                    try await server.send("GET", "/v1/devices/\(a.wireString)/commands?wait=60", headers: Self.bearer(access2))
                }
                try await ConnectionHardeningTests.waitForMetric(server, "beekon_live_viewers", within: .seconds(90), headers: Self.admin) {
                    $0 == 1
                }
                let revoked = try await server.send("POST", "/v1/devices/\(a.wireString)/revoke", headers: Self.admin)
                #expect(revoked.status == 200)
                #expect(try revoked.json()["revoked_credentials"] as? Int == 1)
                let ended = try await poll.value
                #expect(ended.status == 401, "the held poll ended on revocation")
                #expect(try ended.json()["error"] as? String == "device_revoked")

                let after = try await HTTP.upload(
                    server, Fixtures.envelope(Fixtures.locations(1), install: a), headers: Self.bearer(access2))
                #expect(after.status == 401)
                #expect(try after.json()["error"] as? String == "device_revoked")
                let dead = try await server.send(
                    "POST", "/oauth/token", body: Array("grant_type=refresh_token&refresh_token=\(refresh2)".utf8))
                #expect(try dead.json()["error"] as? String == "invalid_grant")
                // A revoked install cannot enrol again.
                #expect(try await Self.enroll(server, code: try await Self.newCode(server), install: a).status == 400)
            }
        }

        @Test("IN-5: a code for n installs enrols exactly n under a concurrent burst")
        func multiUseCodeIsSpentAtomically() async throws {
            try await withRouter(.sqlite, configure: Self.required) { server, _ in
                let code = try await Self.newCode(server, #"{"uses":3}"#)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<8 { group.addTask { try await Self.enroll(server, code: code, install: Fixtures.ids.next()).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 3)
                #expect(statuses.filter { $0 == 400 }.count == 5)
            }
        }

        @Test("IN-5, AU-2: the SDK enrols against the real server; its tokens act for its own install only")
        func sdkEnrollsAgainstTheServer() async throws {
            try await withServer(.sqlite, configure: Self.required) { server, _ in
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-enroll-\(UUID().uuidString).sqlite").path
                defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
                let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ScriptedProvider()))
                let tokenURL = try #require(URL(string: server.base + "/oauth/token"))
                let auth = try await beekon.enroll(code: try await Self.newCode(server), tokenURL: tokenURL)
                let install = try await beekon.installID()
                #expect(auth.refreshUrl == tokenURL)
                #expect(auth.refreshPayload == AuthConfig.refreshing(at: tokenURL).refreshPayload)
                #expect(auth.refreshToken?.isEmpty == false)
                #expect(auth.expiresAt != nil)
                let access = try #require(auth.accessToken)
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: install), headers: Self.bearer(access))
                        .status == 200)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1)), headers: Self.bearer(access)).status == 403)
                // The recipe refreshes as the SDK will (its payload, templated).
                let refreshed = try await HTTP.send(
                    "POST", tokenURL.absoluteString,
                    body: Array("grant_type=refresh_token&refresh_token=\(try #require(auth.refreshToken))".utf8),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"])
                #expect(refreshed.status == 200)

                // Enrolling twice is refused, with a message that says what to do.
                do {
                    _ = try await beekon.enroll(code: try await Self.newCode(server), tokenURL: tokenURL)
                    Issue.record("a second enrollment of one install succeeded")
                } catch let error as BeekonError {
                    guard case .enrollmentFailed(let why) = error else { throw error }
                    #expect(why.contains("refused") && why.contains("new code"))
                }
                // Unreachable: transient, not refused.
                do {
                    _ = try await beekon.enroll(code: "ben1.x", tokenURL: try #require(URL(string: "http://127.0.0.1:1/oauth/token")))
                    Issue.record("enrolling against a closed port succeeded")
                } catch let error as BeekonError {
                    guard case .enrollmentFailed(let why) = error else { throw error }
                    #expect(why.contains("retry later"))
                }
            }
        }

        /// One row of the role table: a request and the status each role gets (an enroller key
        /// is refused everywhere but where it says otherwise).
        struct Row: Sendable {
            var method: String
            var path: String
            var body: String? = nil
            var admin: Int, device: Int, share: Int
            var enroller = 403
        }

        /// SECURITY.md's role table, route by route, for an admin key, a device token bound to
        /// install A, a share of A that may locate, and an enroller key (issue 52). Every route the server registers is here
        /// (the contract test keeps that list complete against openapi.json).
        @Test("XR-2: the role table, route by route, for admin, device and share", arguments: Backend.all)
        func roleTable(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withServer(backend, configure: Self.required, now: { clock.now() }) { server, db in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                let c = Fixtures.ids.next()
                let device = Self.bearer(try await Self.seed(db, subject: a.wireString, install: a).accessToken)
                let envA = Fixtures.envelope(Fixtures.locations(2, startMillis: WireTimestamp(clock.now()).millis - 60_000), install: a)
                #expect(try await HTTP.upload(server, envA, headers: Self.admin).status == 200)
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: b), headers: Self.admin).status == 200)
                let created = try await server.send(
                    "POST", "/v1/shares",
                    body: Array(#"{"devices":["\#(a.wireString)"],"live":true,"locate":true}"#.utf8), headers: Self.admin)
                let share = Self.bearer(try #require(try created.json()["token"] as? String))
                let throwaway = try #require((try created.json()["share"] as? [String: Any])?["id"] as? String)
                let code = try await server.send("POST", "/v1/enrollments", headers: Self.admin)
                let codeID = try #require(try code.json()["id"] as? String)
                let requestA = try await Self.locate(server, a)
                let requestB = try await Self.locate(server, b)
                let A = a.wireString
                let B = b.wireString
                let refuse = #"{"outcome":"refused","reason":"busy"}"#
                let push = #"{"provider":"fcm","token":"role-table-token"}"#
                let rows: [Row] = [
                    Row(method: "GET", path: "/healthz", admin: 200, device: 200, share: 200, enroller: 200),
                    Row(method: "GET", path: "/metrics", admin: 200, device: 401, share: 401, enroller: 401),
                    Row(method: "GET", path: "/openapi.json", admin: 200, device: 200, share: 200, enroller: 200),
                    Row(method: "GET", path: "/v1/devices", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(A)/sessions", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(B)/sessions", admin: 200, device: 403, share: 404),
                    Row(method: "GET", path: "/v1/sessions/\(envA.sessionId.wireString)/track", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(A)/fixes", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(A)/proximity-events", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(A)/history", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/live", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/shares", admin: 200, device: 403, share: 401),
                    Row(method: "GET", path: "/v1/shares/access", admin: 200, device: 403, share: 401),
                    Row(method: "POST", path: "/v1/shares", body: #"{"all":true}"#, admin: 201, device: 403, share: 401),
                    Row(method: "DELETE", path: "/v1/shares/\(throwaway)", admin: 200, device: 403, share: 401),
                    Row(method: "POST", path: "/v1/devices/\(A)/locate", admin: 202, device: 403, share: 202),
                    Row(method: "GET", path: "/v1/devices/\(A)/locate/\(requestA)", admin: 200, device: 403, share: 200),
                    Row(method: "GET", path: "/v1/devices/\(B)/locate/\(requestB)", admin: 200, device: 403, share: 404),
                    Row(method: "GET", path: "/v1/devices/\(A)/commands?wait=0", admin: 200, device: 200, share: 401),
                    Row(method: "GET", path: "/v1/devices/\(B)/commands?wait=0", admin: 200, device: 403, share: 401),
                    Row(
                        method: "POST", path: "/v1/devices/\(A)/locate/\(requestA)/answer", body: refuse, admin: 200, device: 200,
                        share: 401),
                    Row(
                        method: "POST", path: "/v1/devices/\(B)/locate/\(requestB)/answer", body: refuse, admin: 200, device: 403,
                        share: 401),
                    // The device's push token (issue 30): its own install only; a share never.
                    Row(method: "PUT", path: "/v1/devices/\(A)/push-token", body: push, admin: 204, device: 204, share: 401),
                    Row(method: "PUT", path: "/v1/devices/\(B)/push-token", body: push, admin: 204, device: 403, share: 401),
                    Row(method: "DELETE", path: "/v1/devices/\(B)/push-token", admin: 204, device: 403, share: 401),
                    Row(method: "DELETE", path: "/v1/devices/\(A)/push-token", admin: 204, device: 204, share: 401),
                    // An enroller key creates one-use codes for a person, nothing else (issue 52).
                    Row(method: "POST", path: "/v1/enrollments", admin: 201, device: 403, share: 401, enroller: 400),
                    Row(
                        method: "POST", path: "/v1/enrollments", body: #"{"person":"alice"}"#, admin: 201, device: 403, share: 401,
                        enroller: 201),
                    Row(
                        method: "POST", path: "/v1/enrollments", body: #"{"person":"alice","uses":5}"#, admin: 201, device: 403,
                        share: 401),
                    Row(
                        method: "POST", path: "/v1/enrollments", body: #"{"per_hour":5}"#, admin: 201, device: 403, share: 401,
                        enroller: 400),
                    Row(method: "GET", path: "/v1/enrollments", admin: 200, device: 403, share: 401),
                    Row(method: "DELETE", path: "/v1/enrollments/\(codeID)", admin: 200, device: 403, share: 401),
                    Row(method: "POST", path: "/v1/devices/\(c.wireString)/revoke", admin: 200, device: 403, share: 401),
                ]
                // Refusals first (they change nothing), then what each role may do.
                for (role, headers, pick) in [
                    ("device", device, \Row.device), ("share", share, \Row.share), ("enroller", Self.enroller, \Row.enroller),
                    ("admin", Self.admin, \Row.admin),
                ] as [(String, [String: String], KeyPath<Row, Int>)] {
                    for row in rows {
                        let expected = row[keyPath: pick]
                        let got: Int
                        if row.path == "/v1/live", expected == 200 {
                            // A stream: the first fix arrives (only then is it known to be allowed).
                            got = try await Live.fixes(server.base + row.path, headers: headers, after: "0", count: 1).isEmpty ? 0 : 200
                        } else {
                            got = try await server.send(
                                row.method, row.path, body: row.body.map { Array($0.utf8) }, headers: headers
                            ).status
                        }
                        #expect(got == expected, "\(role) \(row.method) \(row.path)")
                    }
                }
                // Ingest: admin for any install, the device for its own only, a share or an enroller never.
                for (headers, install, expected) in [
                    (Self.admin, b, 200), (device, a, 200), (device, b, 403), (share, a, 401), (Self.enroller, a, 403),
                ] as [([String: String], UUID, Int)] {
                    #expect(
                        try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: install), headers: headers).status
                            == expected)
                }
            }
        }
    }
}
