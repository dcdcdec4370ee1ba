@testable import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Logging
import Testing

@Suite("Auth in the sync engine (AU-1, AU-5, AU-6, SY-7)")
struct AuthSyncTests {
    @Test func authorizationWinsOverAStaticHeader() async throws {
        let h = Harness()
        let t = RoutingTransport()
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: authRecipe(), headers: ["authorization": "static", "X-Api-Key": "k"]))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        let r = try #require(await t.ingest.requests.first)
        #expect(r.headers["Authorization"] == "Bearer seed-access-AAAA" && r.headers["authorization"] == nil)
        #expect(r.headers["X-Api-Key"] == "k")
        #expect(await t.token.requests.isEmpty)
    }

    @Test func reactive401RefreshesAndRetriesTheSameBatchOnce() async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(tokenAnswer(#"{"access_token":"after-401","expires_in":"3600"}"#))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        let changes = beekon.authChanges
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        try await beekon.start()
        await h.provider.send([fix(1), fix(2, north: 10)])
        try await beekon.sync()
        let uploads = await t.ingest.requests
        try #require(uploads.count == 2)
        #expect(uploads.map { $0.headers["Authorization"] } == ["Bearer seed-access-AAAA", "Bearer after-401"])
        #expect(uploads[0].body == uploads[1].body, "the same batch, byte for byte")
        #expect(await t.token.requests.count == 1)
        #expect(try await beekon.pendingUploadCount() == 0)
        guard case .succeeded = beekon.currentSyncStatus else {
            Issue.record("\(beekon.currentSyncStatus)")
            return
        }
        let change = await changes.first { _ in true }
        #expect(change?.accessToken == "after-401" && change?.refreshToken == "seed-refresh-RRRR")
    }

    @Test(arguments: [401, 403])
    func a401AfterTheRefreshFailsAuthWithoutALoop(status: Int) async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: status, status)
        await t.token.enqueue(tokenAnswer(#"{"access_token":"still-rejected"}"#))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .failed(.auth(status: status)))
        #expect(await t.ingest.requests.count == 2, "one retry only")
        #expect(await t.token.requests.count == 1, "one refresh only")
        #expect(try await beekon.pendingUploadCount() == 1, "rows kept")
    }

    enum DeadAnswer: String, CaseIterable, Sendable {
        case noToken, redirect, badRequest, unauthorized, forbidden, notFound
        var result: Result<HTTPResponse, HTTPTransportError> {
            switch self {
            case .noToken: return tokenAnswer(#"{"error":"none"}"#)
            case .redirect: return .success(HTTPResponse(status: 302, headers: ["Location": "https://elsewhere/"]))
            case .badRequest: return tokenAnswer(#"{"error":"invalid_grant"}"#, status: 400)
            case .unauthorized: return .success(HTTPResponse(status: 401))
            case .forbidden: return .success(HTTPResponse(status: 403))
            case .notFound: return .success(HTTPResponse(status: 404))
            }
        }
    }

    /// AU-5 dead rows end to end: stop refreshing and uploading, keep every row,
    /// `failed(.auth)`, and a `configure()` with a fresh seed resumes.
    @Test(arguments: DeadAnswer.allCases)
    func deadCredentialsStopEverythingUntilReseeded(answer: DeadAnswer) async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(answer.result)
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        try await beekon.start()
        await h.provider.send([fix(1), fix(2, north: 10)])
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .failed(.auth(status: 401)))
        // Nothing moves: not sync(), not the interval, not a configure() with the same seed.
        try await beekon.sync()
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(900))
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        #expect(await t.ingest.requests.count == 1)
        #expect(await t.token.requests.count == 1)
        #expect(beekon.currentSyncStatus == .failed(.auth(status: nil)))
        #expect(try await beekon.pendingUploadCount() == 2, "every row kept")
        // A fresh seed re-seeds and resumes.
        try await configureSync(beekon, syncConfig(auth: authRecipe(access: "fresh-access", refresh: "fresh-refresh")))
        let uploads = await t.ingest.requests
        try #require(uploads.count == 2)
        #expect(uploads.last?.headers["Authorization"] == "Bearer fresh-access")
        #expect(uploads[0].envelope.batchId == uploads[1].envelope.batchId)
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    enum TransientAnswer: String, CaseIterable, Sendable {
        case requestTimeout, tooMany, serverError, unavailable, timeout, network
        var result: Result<HTTPResponse, HTTPTransportError> {
            switch self {
            case .requestTimeout: return .success(HTTPResponse(status: 408))
            case .tooMany: return .success(HTTPResponse(status: 429))
            case .serverError: return .success(HTTPResponse(status: 500))
            case .unavailable: return .success(HTTPResponse(status: 503))
            case .timeout: return .failure(.timeout)
            case .network: return .failure(.network("connection refused"))
            }
        }
    }

    /// AU-5 transient rows end to end: rows kept, `retrying`, and the retry refreshes and uploads.
    @Test(arguments: TransientAnswer.allCases)
    func transientRefreshFailuresBackOff(answer: TransientAnswer) async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(answer.result, tokenAnswer(#"{"access_token":"second-try"}"#))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        guard case .retrying = beekon.currentSyncStatus else {
            Issue.record("\(beekon.currentSyncStatus)")
            return
        }
        #expect(try await beekon.pendingUploadCount() == 1)
        // The retry re-sends with the (still old) token, gets 401 again (fallback 200 here would skip it), …
        await t.ingest.enqueue(statuses: 401)
        await h.clock.waitForSleepers(2)
        h.clock.advance(by: .seconds(2.5))
        await t.ingest.waitForRequests(3)
        _ = await waitForStatus(beekon) { if case .succeeded = $0 { true } else { false } }
        #expect(await t.token.requests.count == 2)
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer second-try")
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    @Test func openBreakerReportsRetryingAtItsDeadline() async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.token.setFallback(.success(HTTPResponse(status: 503)))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        // No access token yet: every send needs a refresh first.
        try await configureSync(beekon, syncConfig(auth: authRecipe(access: nil)))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()  // failure 1 (the configure drain had nothing to send)
        try await beekon.sync()  // failure 2
        try await beekon.sync()  // failure 3: breaker opens for 30 s
        #expect(await t.token.requests.count == 3)
        #expect(beekon.currentSyncStatus == .retrying(nextAttempt: h.clock.now().addingTimeInterval(30)))
        try await beekon.sync()  // open: no call
        #expect(await t.token.requests.count == 3)
        #expect(beekon.currentSyncStatus == .retrying(nextAttempt: h.clock.now().addingTimeInterval(30)))
        #expect(await t.ingest.requests.isEmpty, "no token: nothing is sent")
        #expect(try await beekon.pendingUploadCount() == 1)
    }

    /// Token lifetimes run on `authClock` (real time), not on the SDK clock, which a replay
    /// moves with the track: a replay racing two hours ahead does not make a one-hour token
    /// look expired (no refresh, the seed token is sent); the token expires when real time
    /// says so.
    @Test func tokenLifetimesFollowTheAuthClockNotTheReplayClock() async throws {
        let h = Harness()
        let real = TestClock()
        let t = RoutingTransport()
        await t.token.enqueue(tokenAnswer(#"{"access_token":"after-an-hour","expires_in":"3600"}"#))
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: h.dir.db, provider: h.provider, clock: h.clock, logger: Logger(label: "beekon.test"),
                transport: t, randomUnit: { 0 }, secretStore: InMemorySecretStore(), authClock: real))
        try await configureSync(beekon, syncConfig(auth: authRecipe(expiresAt: real.now().timeIntervalSince1970 + 3600)))
        try await beekon.start()
        h.clock.advance(by: .seconds(7200))  // the replay jumps two hours of track time
        await h.provider.send(fix(7200))
        try await beekon.sync()
        #expect(await t.token.requests.isEmpty, "real time has not reached the token's expiry")
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer seed-access-AAAA")
        real.advance(by: .seconds(3600))
        await h.provider.send(fix(7201, north: 10))
        try await beekon.sync()
        #expect(await t.token.requests.count == 1, "due on the real clock: refreshed before the upload")
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer after-an-hour")
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    @Test func withoutRefreshUrlA401KeepsTodaysBehaviour() async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: AuthConfig(accessToken: "only-seed")))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .failed(.auth(status: 401)))
        #expect(await t.ingest.requests.first?.headers["Authorization"] == "Bearer only-seed")
        try await beekon.sync()  // sync() retries as before
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    @Test func reseedOnConfigureWithDifferentTokensOnly() async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(tokenAnswer(#"{"access_token":"rotated-1"}"#))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(auth: authRecipe()))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        // Same seed, other settings changed: the live token stays.
        var same = authRecipe()
        same.skewMarginSeconds = 120
        try await configureSync(beekon, syncConfig(auth: same))
        await h.provider.send(fix(2, north: 10))
        try await beekon.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer rotated-1")
        // Different seed tokens: re-seeded.
        try await configureSync(beekon, syncConfig(auth: authRecipe(access: "new-seed", refresh: "new-refresh")))
        await h.provider.send(fix(3, north: 20))
        try await beekon.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer new-seed")
    }
}
