import Beekon
import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Logging
import Testing

@testable import Beekon

/// BY-2, BY-3: the device side of locate on demand, with the scripted provider and the
/// test clock (no server: sync is off, so nothing is sent).
@Suite("Locate requests on the device")
struct LocateRequestTests {
    @Test func anAnswerIsOneFreshManualFixCarryingTheRequestIDAndBypassingTheGate() async throws {
        let h = Harness()
        let beekon = h.beekon()
        // A gate that would reject anything within an hour or a kilometre of the last fix.
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 3_600, minDistanceBetweenLocationsMeters: 1_000))
        try await beekon.start()
        await h.provider.send(fix(0))
        await h.provider.setOneShotFix(fix(1, north: 3))
        let request = UUID()
        let answer = await beekon.handleLocateRequest(id: request)
        guard case .answered(let location) = answer else {
            Issue.record("expected an answer, got \(answer)")
            return
        }
        #expect(location.trigger == .manual)
        #expect(location.locateRequestId == request)
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.count == 2, "the tracked fix and the answer, stored past the gate")
        #expect(rows.last?.locateRequestId == request)
        #expect(await h.provider.isRunning, "tracking goes on as before")
        try await beekon.stop()
    }

    @Test func guardsRefuseWithTheirReasonAndStoreNothing() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig())
        // No fix from the source within the timeout: refused, never a cached fix.
        await beekon.setLocatePolicy(LocatePolicy(timeoutSeconds: 1))
        #expect(await beekon.handleLocateRequest(id: UUID()) == .refused(reason: "no_fix"))
        // An answer, then one sooner than the battery guard allows.
        await h.provider.setOneShotFix(fix(0))
        await beekon.setLocatePolicy(LocatePolicy(minIntervalSeconds: 30))
        guard case .answered = await beekon.handleLocateRequest(id: UUID()) else {
            Issue.record("the first request is answered")
            return
        }
        #expect(await beekon.handleLocateRequest(id: UUID()) == .refused(reason: "too_soon"))
        h.clock.advance(by: .seconds(31))
        guard case .answered = await beekon.handleLocateRequest(id: UUID()) else {
            Issue.record("answered again once the interval has passed")
            return
        }
        // Sharing off: refused whatever the source has.
        await beekon.setLocatePolicy(LocatePolicy(sharingEnabled: false, minIntervalSeconds: 0))
        #expect(await beekon.handleLocateRequest(id: UUID()) == .refused(reason: "sharing_off"))
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.count == 2, "only the two answers are stored")
    }

    @Test func theGuardRule() {
        var g = LocateGuard()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(g.refusal(now: t0) == nil)
        g.lastAnswered = t0
        g.policy = LocatePolicy(minIntervalSeconds: 30)
        #expect(g.refusal(now: t0.addingTimeInterval(29.9)) == "too_soon")
        #expect(g.refusal(now: t0.addingTimeInterval(30)) == nil)
        // A clock that stepped back does not lock the device out.
        #expect(g.refusal(now: t0.addingTimeInterval(-600)) == nil)
        g.policy.sharingEnabled = false
        #expect(g.refusal(now: t0.addingTimeInterval(3_600)) == "sharing_off")
    }

    @Test func aCommandChannelAnswerIsClassified() {
        let id = UUID()
        let notice = #"{"id":"\#(id.wireString)","created_at":"2026-06-15T12:34:50.000Z","expires_at":"2026-06-15T12:35:50.000Z"}"#
        let body = Data(#"{"locate_requests":[\#(notice)],"future":1}"#.utf8)
        #expect(LocatePoll(status: 200, body: body) == .requests([id]))
        #expect(LocatePoll(status: 200, body: Data("not json".utf8)) == .requests([]))
        // Not the contract's `WireCommands` (a notice without its times): nothing is read from it.
        #expect(LocatePoll(status: 200, body: Data(#"{"locate_requests":[{"id":"\#(id.wireString)"}]}"#.utf8)) == .requests([]))
        // An upload-only backend: asked again only rarely by the agent.
        for status in [404, 405, 501] { #expect(LocatePoll(status: status, body: Data()) == .unsupported(status: status)) }
        for status in [401, 429, 500, 503] { #expect(LocatePoll(status: status, body: Data()) == .failed) }
    }
}

/// BY-2: a request listed in an upload's answer (the piggybacked delivery) is answered by
/// the SDK on its own, once, even when the same id arrives again.
@Suite("Locate requests delivered in upload answers")
struct LocatePiggybackTests {
    @Test func aRequestInAnUploadAnswerIsAnsweredOnceWithAManualFix() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        await h.provider.setOneShotFix(fix(5, north: 7))
        let request = UUID()
        let notice = WireLocateNotice(id: request, createdAt: WireTimestamp(millis: 0), expiresAt: WireTimestamp(millis: 60_000))
        let listing = WireIngestAnswer(
            duplicateBatch: false, locationsStored: 1, locationsDuplicate: 0, eventsStored: 0, eventsDuplicate: 0, locateRequests: [notice]
        ).encoded()
        // The same request listed in two answers in a row: answered once.
        await transport.enqueue(.success(HTTPResponse(status: 200, body: listing)), .success(HTTPResponse(status: 200, body: listing)))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.stop()  // session stop: the first upload, whose answer lists the request
        await transport.waitForRequests(2)
        let answer = await transport.requests[1].envelope.locations
        #expect(answer.count == 1)
        #expect(answer.first?.trigger == .manual)
        #expect(answer.first?.locateRequestId == request)
        _ = try await beekon.sync()
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.filter { $0.locateRequestId == request }.count == 1, "answered once though listed twice")
        #expect(await beekon.handleLocateRequest(id: request) == .refused(reason: "already_handled"))
    }

    /// The engine reports what the answer listed as an event (it holds no closure into the
    /// actor), without waiting for anyone to read it; its stream ends at shutdown.
    @Test func theEngineReportsListedRequestsAsAnEvent() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        try await store.insert(
            Location(id: UUID(), sessionId: UUID(), timestamp: Date(timeIntervalSince1970: 1_800_000_000), latitude: 48, longitude: 11),
            syncOn: true, by: .storeTestsOnly)
        let request = UUID()
        let notice = WireLocateNotice(id: request, createdAt: WireTimestamp(millis: 0), expiresAt: WireTimestamp(millis: 60_000))
        let listing = WireIngestAnswer(
            duplicateBatch: false, locationsStored: 1, locationsDuplicate: 0, eventsStored: 0, eventsDuplicate: 0, locateRequests: [notice]
        ).encoded()
        let transport = ScriptedTransport()
        await transport.enqueue(.success(HTTPResponse(status: 200, body: listing)))
        let engine = SyncEngine(
            config: SyncConfig(url: loopbackURL), store: store, transport: transport, clock: TestClock(), makeID: { UUID() },
            randomUnit: { 0 }, status: Broadcast(), logger: Logger(label: "test"), installID: UUID())
        await engine.start()
        let outcome = await engine.syncNow()
        #expect(outcome.uploadedLocations == 1, "the drain finished with nobody reading the events")
        var events = engine.events.makeAsyncIterator()
        #expect(await events.next() == .locateRequested([request]))
        await engine.shutdown()
        #expect(await events.next() == nil)
    }
}
