@testable import Beekon
import BeekonTestSupport
import BeekonTesting
import GRDB
import Foundation
import Testing

@Suite("Sync triggers, batching and crash safety (SY-3, SY-4, SY-6)")
struct SyncOrderingTests {
    @Test func oneSessionPerBatchOldestFirst() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: 2)))
        await transport.hold()
        try await beekon.start()
        let a = try #require(await beekon.sessionID)
        await h.provider.send((0..<3).map { fix(Double($0), north: Double($0) * 10) })
        try await beekon.stop()  // session-stop trigger; request held
        try await beekon.start()
        let b = try #require(await beekon.sessionID)
        await h.provider.send((10..<12).map { fix(Double($0), north: Double($0) * 10) })
        await transport.release()
        try await beekon.sync()
        let batches = await transport.requests.map(\.envelope)
        #expect(batches.map(\.sessionId) == [a, a, b])
        #expect(batches.map(\.locations.count) == [2, 1, 2])
        let times = batches.flatMap(\.locations).map(\.timestamp.millis)
        #expect(times == times.sorted(), "oldest rows first")
    }

    @Test func sessionStopTriggersAnImmediateFlush() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send([fix(1), fix(2, north: 20)])
        try await beekon.stop()
        await transport.waitForRequests(1)
        #expect(await transport.requests[0].envelope.locations.count == 2)
    }

    @Test func thresholdTrigger() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, syncThreshold: 3)))
        try await beekon.start()
        await h.provider.send([fix(1), fix(2, north: 20)])
        #expect(await transport.requests.isEmpty)
        await h.provider.send(fix(3, north: 40))
        await transport.waitForRequests(1)
        #expect(await transport.requests[0].envelope.locations.count == 3)
    }

    @Test func intervalTrigger() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, intervalSeconds: 120)))
        try await beekon.start()
        await h.provider.send(fix(1))
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(119))
        #expect(await transport.requests.isEmpty)
        h.clock.advance(by: .seconds(1))
        await transport.waitForRequests(1)
    }

    @Test func wakesDuringADrainCoalesce() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, syncThreshold: 1)))
        await transport.hold()
        try await beekon.start()
        await h.provider.send(fix(1))  // threshold → drain starts, request held
        await transport.waitForRequests(1)
        await h.provider.send((2..<8).map { fix(Double($0), north: Double($0) * 10) })  // six more wakes
        await transport.release()
        try await beekon.sync()
        let r = await transport.requests
        try #require(r.count == 2, "one drain in flight + one coalesced pass, not one per wake")
        #expect(r[1].envelope.locations.count == 6)
    }

    @Test func aBatchInterruptedByProcessDeathIsResentWithTheSameIdAndRows() async throws {
        let h = Harness()
        let first = ScriptedTransport()
        await first.hold()
        let dying = h.beekon(transport: first)
        try await configureSync(dying, syncConfig())
        try await dying.start()
        await h.provider.send((0..<4).map { fix(Double($0), north: Double($0) * 10) })
        Task { try? await dying.sync() }
        await first.waitForRequests(1)  // in flight; the answer never arrives
        let sent = await first.requests[0].envelope
        // Relaunch on the same database while the old instance is frozen mid-request.
        let second = ScriptedTransport()
        let relaunched = h.beekon(transport: second)
        #expect(try await relaunched.resumeIfNeeded())
        try await relaunched.sync()
        let resent = await second.requests[0].envelope
        #expect(resent.batchId == sent.batchId)
        #expect(resent.locations == sent.locations)
        #expect(resent.sentAt == sent.sentAt)
        #expect(try await relaunched.pendingUploadCount() == 0)
    }

    /// While a full batch is in flight the next one is assembled and persisted (so encoding and
    /// the database overlap the network). When the first fails, both stay open and go out on
    /// the next drain in order, each with its own id, and no fix travels in two batch ids.
    @Test func theBatchPreparedDuringAFailedUploadGoesOutAfterItWithItsOwnID() async throws {
        let (h, transport, beekon) = try await fiveFixesInBatchesOfTwo()
        defer { withExtendedLifetime(h) {} }  // its directory holds the database
        await transport.enqueue(.failure(.network("offline")))
        try await beekon.sync()
        #expect(await transport.requests.count == 1)
        #expect(try await beekon.storeReport().openBatches == 2, "the failed batch and the one prepared meanwhile")
        try await beekon.sync()
        let sent = await transport.requests.map(\.envelope)
        try #require(sent.count == 4, "failed b1, then b1, b2, b3: \(sent.map(\.locations.count))")
        #expect(sent[1].batchId == sent[0].batchId && sent[1].locations == sent[0].locations && sent[1].sentAt == sent[0].sentAt)
        #expect(Set(sent.dropFirst().map(\.batchId)).count == 3)
        #expect(sent.dropFirst().map(\.locations.count) == [2, 2, 1])
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture).map(\.id)
        #expect(sent.dropFirst().flatMap(\.locations).map(\.id) == stored, "every fix once, oldest first")
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(try await beekon.storeReport().openBatches == 0)
    }

    /// The acknowledgement of an accepted batch commits while the next batch is in flight.
    /// When that commit fails (injected: a trigger aborts it, as a full disk would), the
    /// drain stops, both accepted batches stay queued under their ids, and the next drain
    /// sends them again — same id, same rows — before the rest: duplicates the server
    /// dedupes, nothing lost, nothing sent out of order.
    @Test func aFailedAcknowledgementLeavesTheBatchQueuedUnderItsID() async throws {
        let (h, transport, beekon) = try await fiveFixesInBatchesOfTwo()
        var sideConfig = Configuration()
        sideConfig.busyMode = .timeout(30)  // waits for the SDK's writer instead of failing
        let side = try DatabaseQueue(path: h.dir.db, configuration: sideConfig)
        try await side.write { db in
            try db.execute(sql: "CREATE TRIGGER fail_ack BEFORE DELETE ON upload_batch BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
        }
        try await beekon.sync()
        #expect(await transport.requests.count == 2, "b1 accepted, b2 sent while b1's acknowledgement failed")
        #expect(try await beekon.pendingUploadCount() == 5)
        #expect(try await beekon.storeReport().openBatches == 3, "b1 and b2 accepted but not recorded, b3 prepared meanwhile")
        try await side.write { db in try db.execute(sql: "DROP TRIGGER fail_ack") }
        try side.close()
        try await beekon.sync()
        let sent = await transport.requests.map(\.envelope)
        try #require(sent.count == 5, "b1, b2, then b1, b2 again and b3: \(sent.map(\.locations.count))")
        #expect(sent[2].batchId == sent[0].batchId && sent[2].locations == sent[0].locations)
        #expect(sent[3].batchId == sent[1].batchId && sent[3].locations == sent[1].locations)
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture).map(\.id)
        #expect(sent.dropFirst(2).flatMap(\.locations).map(\.id) == stored, "every fix once, oldest first")
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(try await beekon.storeReport().openBatches == 0)
    }

    /// Five fixes stored with sync in batches of two, nothing sent yet.
    private func fiveFixesInBatchesOfTwo() async throws -> (Harness, ScriptedTransport, Beekon) {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: 2)))
        try await beekon.start()
        await h.provider.send((0..<5).map { fix(Double($0), north: Double($0) * 10) })
        return (h, transport, beekon)
    }

    @Test func unacknowledgedRowsAreExemptFromTheAgePruneButNotTheCap() async throws {
        let h = Harness()
        let transport = ScriptedTransport(fallback: .failure(.network("offline")))
        let beekon = h.beekon(transport: transport, rowCap: 3)
        try await configureSync(beekon, syncConfig())
        try await beekon.start()
        await h.provider.send([fix(0), fix(1, north: 10)])
        h.clock.advance(by: .seconds(8 * 86_400))
        await h.provider.send(fix(8 * 86_400, north: 20))
        let kept = try await beekon.history(from: .distantPast, to: .distantFuture).count
        let aged = try await beekon.storeReport().agedRowsTotal
        #expect(kept == 3 && aged == 0, "offline backlog kept (kept \(kept), aged \(aged))")
        await h.provider.send(fix(8 * 86_400 + 1, north: 30))
        let report = try await beekon.storeReport()
        #expect(report.trimmedRowsTotal == 1)
        #expect(report.trimmedUnsentTotal == 1, "trimmed before upload: counted")
    }
}
