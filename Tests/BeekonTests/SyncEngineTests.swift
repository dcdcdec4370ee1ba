import BeekonTestSupport
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation
import Testing

@Suite("Sync engine (SY-1..11)")
struct SyncEngineTests {
    @Test func noSyncConfigMeansNoNetworkAtAll() async throws {
        let h = Harness()
        let beekon = h.beekon(transport: ForbiddenTransport { r in Issue.record("unexpected request to \(r.url)") })
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send((0..<20).map { fix(Double($0), north: Double($0) * 10) })
        h.clock.advance(by: .seconds(3600))
        try await beekon.stop()
        await #expect(throws: BeekonError.self) { try await beekon.sync() }
        #expect(try await beekon.pendingUploadCount() == 20)
        #expect(beekon.currentSyncStatus == .idle)
    }

    @Test(arguments: [
        ("https://api.example.com/v1/locations", true), ("http://127.0.0.1:8080/x", true),
        ("http://127.5.6.7/x", true), ("http://localhost:1/", true), ("http://[::1]:8080/x", true),
        ("http://api.example.com/x", false), ("http://10.0.0.1/x", false), ("http://128.0.0.1/x", false),
        ("ftp://127.0.0.1/x", false), ("http://localhost.evil.com/x", false),
    ])
    func urlRule(url: String, allowed: Bool) async throws {
        let h = Harness()
        let beekon = h.beekon(transport: ScriptedTransport())
        let config = syncConfig(SyncConfig(url: URL(string: url)!))
        if allowed {
            try await beekon.configure(config)
        } else {
            await #expect(throws: BeekonError.self) { try await beekon.configure(config) }
            #expect(try await beekon.configuration().sync == nil, "a rejected configuration is not applied")
        }
    }

    @Test func valuesAreClampedAndFloored() {
        let c = SyncConfig(url: loopbackURL, intervalSeconds: 5, batchSize: 5000)
        #expect(c.effectiveIntervalSeconds == 60 && c.effectiveBatchSize == 1000)
        #expect(SyncConfig(url: loopbackURL, batchSize: 0).effectiveBatchSize == 1)
        let d = SyncConfig(url: loopbackURL)
        #expect(d.intervalSeconds == 300 && d.batchSize == 100 && d.syncThreshold == 0 && d.headers.isEmpty)
    }

    @Test func exactEnvelopeBytesAndHeaders() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let ids = SequentialIDs()
        let beekon = h.beekon(transport: transport, ids: ids)
        try await configureSync(
            beekon, syncConfig(SyncConfig(url: loopbackURL, headers: ["X-Api-Key": "k", "Content-Type": "text/plain"])))
        try await beekon.setExtras(["user_id": "u-1", "a": "b"])
        try await beekon.start()
        await h.provider.send(
            RawFix(
                timestamp: h.clock.now(), latitude: 37.7749, longitude: -122.4194,
                accuracy: 5.2, speed: 2.5, bearing: 180, altitude: 14))
        await h.provider.send(RawFix(timestamp: h.clock.now().addingTimeInterval(1.5), latitude: 38, longitude: -122))
        try await beekon.sync()
        let r = try #require(await transport.requests.first)
        #expect(r.method == "POST" && r.url == loopbackURL)
        #expect(r.headers["Content-Type"] == "application/json" && r.headers["Content-Encoding"] == "gzip")
        #expect(r.headers["X-Api-Key"] == "k")
        #expect(r.body.prefix(2) == Data([0x1F, 0x8B]), "body is gzip")
        let e = r.envelope
        let install = try await beekon.installID().wireString
        let model = DeviceInfo.model.map { ",\"model\":\"\($0)\"" } ?? ""
        let expected = """
            {"schema_version":1,"batch_id":"\(e.batchId.wireString)","session_id":"\(e.sessionId.wireString)",\
            "sent_at":"2026-01-01T00:00:00.000Z","device":{"install_id":"\(install)","platform":"linux",\
            "sdk_version":"\(BeekonVersion.current)"\(model),"sync_interval_seconds":300},"extras":{"a":"b","user_id":"u-1"},"locations":[\
            {"id":"\(e.locations[0].id.wireString)","timestamp":"2026-01-01T00:00:00.000Z","trigger":"interval",\
            "motion":"unknown","is_mock":false,"latitude":37.7749,"longitude":-122.4194,"accuracy":5.2,"speed":2.5,\
            "bearing":180,"altitude":14},\
            {"id":"\(e.locations[1].id.wireString)","timestamp":"2026-01-01T00:00:01.500Z","trigger":"interval",\
            "motion":"moving","is_mock":false,"latitude":38,"longitude":-122,"quality":"implausible_speed"}],"geofence_events":[]}
            """
        #expect(r.json == expected)
    }

    @Test func extrasOmittedWhenEmpty() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        #expect(await !transport.requests[0].json.contains("extras"))
    }

    @Test func acceptedRowsLeaveTheQueueButStayInHistory() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send((0..<5).map { fix(Double($0), north: Double($0) * 10) })
        #expect(try await beekon.pendingUploadCount() == 5)
        try await beekon.sync()
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 5)
        guard case .succeeded = beekon.currentSyncStatus else {
            Issue.record("status \(beekon.currentSyncStatus)")
            return
        }
        try await beekon.sync()
        #expect(await transport.requests.count == 1, "nothing pending: no request")
    }

    @Test func keepUploadedLocationsFalseDeletesOnAcknowledgement() async throws {
        let h = Harness()
        let beekon = h.beekon(transport: ScriptedTransport())
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, keepUploadedLocations: false)))
        try await beekon.start()
        await h.provider.send((0..<3).map { fix(Double($0), north: Double($0) * 10) })
        try await beekon.sync()
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).isEmpty)
    }

    @Test(arguments: [400, 422])
    func rejectedBatchesAreSetAsideNeverRetried(status: Int) async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: status)
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: 2)))
        try await beekon.start()
        await h.provider.send((0..<3).map { fix(Double($0), north: Double($0) * 10) })
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .failed(.rejected(status: status)))
        #expect(try await beekon.rejectedLocations().count == 2)
        #expect(try await beekon.pendingUploadCount() == 1)
        try await beekon.sync()
        let requests = await transport.requests
        try #require(requests.count == 2)
        #expect(requests[1].envelope.locations.count == 1, "the rejected rows are never sent again")
        #expect(requests[0].envelope.batchId != requests[1].envelope.batchId)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 3, "rows kept for inspection")
    }

    @Test(arguments: [401, 403])
    func unauthorizedKeepsRowsAndReportsAuth(status: Int) async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: status)
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .failed(.auth(status: status)))
        #expect(try await beekon.pendingUploadCount() == 1)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 599])
    func transientStatusesBackOffAndRetryTheSameBatch(status: Int) async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: status)
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send([fix(1), fix(2, north: 10)])
        try await beekon.sync()
        // randomUnit 0: first backoff is base/2 = 2.5 s.
        #expect(beekon.currentSyncStatus == .retrying(nextAttempt: h.clock.now().addingTimeInterval(2.5)))
        #expect(try await beekon.pendingUploadCount() == 2)
        await h.clock.waitForSleepers(2)  // interval timer + retry timer
        h.clock.advance(by: .seconds(2.5))
        await transport.waitForRequests(2)
        _ = await waitForStatus(beekon) { if case .succeeded = $0 { true } else { false } }
        let r = await transport.requests
        try #require(r.count >= 2)
        #expect(r[0].envelope == r[1].envelope, "same batch_id, same rows, same bytes")
        #expect(r[0].body == r[1].body)
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    @Test func retryAfterIsHonoured() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(.success(HTTPResponse(status: 503, headers: ["Retry-After": "120"])))
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        #expect(beekon.currentSyncStatus == .retrying(nextAttempt: h.clock.now().addingTimeInterval(120)))
        await h.clock.waitForSleepers(2)
        h.clock.advance(by: .seconds(119))
        #expect(await transport.requests.count == 1)
        h.clock.advance(by: .seconds(1))
        await transport.waitForRequests(2)
    }

    @Test func backoffGrowsAndIsCapped() {
        let b = Backoff()
        #expect(b.delay(attempt: 1, random: 0) == .milliseconds(2500))
        #expect(b.delay(attempt: 2, random: 1) == .seconds(10))
        #expect(b.delay(attempt: 3, random: 0.5) == .seconds(15))
        #expect(b.delay(attempt: 30, random: 1) == .seconds(600))
        #expect(StatusPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: Date(timeIntervalSince1970: 1_445_412_420)) == .seconds(60))
        #expect(StatusPolicy.retryAfter("soon", now: Date()) == nil)
    }

    @Test func statusPolicyTable() {
        func c(_ s: Int) -> UploadOutcome { StatusPolicy.classify(.success(HTTPResponse(status: s)), now: Date()) }
        #expect(c(200) == .accepted && c(201) == .accepted && c(204) == .accepted)
        #expect(c(400) == .rejected(status: 400) && c(422) == .rejected(status: 422))
        #expect(c(401) == .unauthorized(status: 401) && c(403) == .unauthorized(status: 403))
        for s in [408, 429, 500, 503] { #expect(c(s) == .retryable(status: s, retryAfter: nil)) }
        for s in [301, 302, 307, 308, 404, 405, 409, 410, 413, 418] { #expect(c(s) == .permanent(status: s)) }
        #expect(StatusPolicy.classify(.failure(.timeout), now: Date()) == .retryable(status: nil, retryAfter: nil))
        #expect(StatusPolicy.classify(.failure(.network("reset")), now: Date()) == .retryable(status: nil, retryAfter: nil))
    }

    @Test(arguments: [413, 404, 302])
    func permanentFailuresWaitForIntervalSyncOrConfigure(status: Int) async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: status, status)
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, syncThreshold: 1)))
        try await beekon.start()
        await h.provider.send(fix(1))  // threshold wake → first attempt fails
        await transport.waitForRequests(1)
        _ = await waitForStatus(beekon) { $0 == .failed(.permanent(status: status)) }
        await h.provider.send(fix(2, north: 10))  // threshold trigger: no tight loop
        try await beekon.sync()  // sync() retries (fails again)
        #expect(await transport.requests.count == 2)
        #expect(beekon.currentSyncStatus == .failed(.permanent(status: status)))
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(300))  // the interval retries, and succeeds
        await transport.waitForRequests(3)
        _ = await waitForStatus(beekon) { if case .succeeded = $0 { true } else { false } }
        #expect(try await beekon.pendingUploadCount() == 0)
        let r = await transport.requests
        try #require(r.count >= 3)
        #expect(r[0].envelope.batchId == r[2].envelope.batchId, "no automatic shrink: same batch")
    }

    /// A server refuses a batch id it stored with other content (409); the rows keep
    /// SY-7's no-tight-loop hold, then go out under a new batch id instead of the spent one.
    @Test func conflictingBatchIdIsReplacedOnTheNextAttempt() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: 409)
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, syncThreshold: 1)))
        try await beekon.start()
        await h.provider.send(fix(1))
        await transport.waitForRequests(1)
        _ = await waitForStatus(beekon) { $0 == .failed(.permanent(status: 409)) }
        try await beekon.sync()
        await transport.waitForRequests(2)
        _ = await waitForStatus(beekon) { if case .succeeded = $0 { true } else { false } }
        #expect(try await beekon.pendingUploadCount() == 0)
        let r = await transport.requests
        try #require(r.count >= 2)
        #expect(r[0].envelope.batchId != r[1].envelope.batchId, "a new batch id after the conflict")
        #expect(r[0].envelope.locations.map(\.id) == r[1].envelope.locations.map(\.id), "the same rows")
    }

    @Test func timeoutsAndNetworkErrorsRetry() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(.failure(.timeout), .failure(.network("connection reset")))
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.sync()
        guard case .retrying = beekon.currentSyncStatus else {
            Issue.record("\(beekon.currentSyncStatus)")
            return
        }
        try await beekon.sync()  // sync() overrides the backoff
        guard case .retrying(let next) = beekon.currentSyncStatus else {
            Issue.record("\(beekon.currentSyncStatus)")
            return
        }
        #expect(next == h.clock.now().addingTimeInterval(5), "second failure: 10 s window, equal jitter 0 → 5 s")
        try await beekon.sync()
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(Set(await transport.requests.map(\.envelope.batchId)).count == 1)
    }
}
