import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// API keys, access tokens and the token endpoint, through the application's router (in memory).
    @Suite struct AuthHTTP {
        /// Issues a grant through a second store on the same database (as `beekon-ingest issue-token` does).
        static func seed(_ db: TestDatabase, subject: String, accessTTL: Int = 900) async throws -> TokenGrant {
            let store = try IngestServer.makeStore(
                IngestConfiguration(database: db.location, databaseTimeoutSeconds: testDatabaseTimeout), logger: testLogger)
            return try await IngestServer.withServices(store.services, logger: testLogger) {
                let tokens = TokenService(store: store.tokens, accessTTLSeconds: accessTTL, refreshTTLSeconds: 3600)
                try await tokens.loadKey()
                return try await tokens.issue(subject: subject)
            }
        }

        /// The routes on SQLite; the refresh rotation's store behaviour is StoreContract's
        /// (`refreshTokensRotateWithGraceAndDetectReuse`), once per backend.
        @Test(arguments: [Backend.sqlite])
        func requiredAuthAcceptsKeysAndRotatingTokens(_ backend: Backend) async throws {
            try await withRouter(
                backend,
                configure: {
                    $0.authMode = .required
                    $0.apiKeys = ["k-123"]
                }
            ) { server, db in
                let e = Fixtures.envelope(Fixtures.locations(3))
                #expect(try await HTTP.upload(server, e).status == 401)
                #expect(try await HTTP.upload(server, e, headers: ["Authorization": "Bearer nope"]).status == 401)
                #expect(try await HTTP.upload(server, e, headers: ["X-API-Key": "k-123"]).status == 200)
                let seed = try await Self.seed(db, subject: "truck-7")
                // A device credential acts for one install: the first it uploads as (issue 28).
                let truck = Fixtures.ids.next()
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: truck),
                        headers: ["Authorization": "Bearer \(seed.accessToken)"]
                    ).status == 200)
                // The SDK's raw strategy: the token without a scheme.
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: truck),
                        headers: ["Authorization": seed.accessToken]
                    ).status == 200)
                // Refresh as a form (the SDK default), then as JSON with the rotated token.
                let form = try await server.send(
                    "POST", "/oauth/token",
                    body: Array("grant_type=refresh_token&refresh_token=\(seed.refreshToken)".utf8),
                    headers: [
                        "Content-Type": "application/x-www-form-urlencoded",
                        "Authorization": "Bearer \(seed.accessToken)",
                    ])
                #expect(form.status == 200)
                let grant = try form.json()
                let access = try #require(grant["access_token"] as? String)
                let refresh = try #require(grant["refresh_token"] as? String)
                #expect(grant["expires_in"] as? Int == 900)
                #expect(refresh != seed.refreshToken)
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: truck),
                        headers: ["Authorization": "Bearer \(access)"]
                    ).status == 200)
                let json = try await server.send(
                    "POST", "/oauth/token",
                    body: Array("{\"grant_type\":\"refresh_token\",\"refresh_token\":\"\(refresh)\"}".utf8),
                    headers: ["Content-Type": "application/json"])
                #expect(json.status == 200)
                // The first refresh token's successor has been used: replaying it is refused and revokes the chain.
                let replay = try await server.send(
                    "POST", "/oauth/token",
                    body: Array("grant_type=refresh_token&refresh_token=\(seed.refreshToken)".utf8))
                #expect(replay.status == 400)
                #expect(try replay.json()["error"] as? String == "invalid_grant")
                let wrongGrant = try await server.send("POST", "/oauth/token", body: Array("grant_type=password".utf8))
                #expect(try wrongGrant.json()["error"] as? String == "unsupported_grant_type")
                // Reads need the API key; device tokens may only upload.
                #expect(try await server.send("GET", "/v1/devices").status == 401)
                #expect(
                    try await server.send("GET", "/v1/devices", headers: ["Authorization": "Bearer \(access)"]).status == 403)
                #expect(try await server.send("GET", "/v1/devices", headers: ["Authorization": "Bearer k-123"]).status == 200)
            }
        }

        @Test func expiredAccessTokenGets401() async throws {
            try await withRouter(.sqlite, configure: { $0.authMode = .required }) { server, db in
                let seed = try await Self.seed(db, subject: "old-device", accessTTL: -10)
                let r = try await HTTP.upload(
                    server, Fixtures.envelope(Fixtures.locations(1)),
                    headers: ["Authorization": "Bearer \(seed.accessToken)"])
                #expect(r.status == 401)
                #expect(r.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
        }

        @Test func authDefaultsToOffOnlyForSQLiteWithoutKeys() {
            #expect(!IngestConfiguration().authRequired)
            #expect(IngestConfiguration(apiKeys: ["k"]).authRequired)
            let pg = DatabaseLocation.postgres(PostgresLocation(host: "127.0.0.1", username: "u", database: "d"))
            #expect(IngestConfiguration(database: pg).authRequired)
            #expect(!IngestConfiguration(database: pg, authMode: .off).authRequired)
        }
    }
}
