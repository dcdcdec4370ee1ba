import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import GRDB
import Testing

@testable import Beekon

/// The overlapped drain at the transport seam, on a real database: while batch N is on the
/// wire, N+1 is assembled and persisted and N-1's mark commits. Whatever happens to N,
/// nothing is skipped, nothing is marked that the server did not accept, and what was
/// prepared goes out later under its own id, in order (SY-4..7, AU-6).
@Suite("Overlapped drain (SY-4, SY-5, SY-6, SY-7, AU-6)")
struct DrainOverlapTests {
    /// Five fixes stored with sync in batches of two, nothing sent yet.
    private func fiveFixes(_ transport: any HTTPTransport, _ config: BeekonConfig? = nil) async throws -> (Harness, Beekon) {
        let h = Harness()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, config ?? syncConfig(SyncConfig(url: loopbackURL, batchSize: 2)))
        try await beekon.start()
        await h.provider.send((0..<5).map { fix(Double($0), north: Double($0) * 10) })
        return (h, beekon)
    }

    /// The answer to N arrives while N+1 is being prepared (the transport answers as soon
    /// as the request arrives, the assembly of N+1 runs beside it): every batch goes out
    /// once, in order, and `sync()` counts what the server accepted.
    @Test func anAnswerArrivingWhileTheNextBatchIsPreparedKeepsOrderAndCounts() async throws {
        let transport = ScriptedTransport()
        let (h, beekon) = try await fiveFixes(transport)
        defer { withExtendedLifetime(h) {} }
        await transport.hold()
        let drain = Task { try await beekon.sync() }
        await transport.waitForRequests(1)
        await transport.release()
        let outcome = try await drain.value
        #expect(outcome.uploadedLocations == 5 && outcome.pending == 0 && outcome.failure == nil, "\(outcome)")
        let sent = await transport.requests.map(\.envelope)
        #expect(sent.map(\.locations.count) == [2, 2, 1])
        #expect(Set(sent.map(\.batchId)).count == 3)
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture).map(\.id)
        #expect(sent.flatMap(\.locations).map(\.id) == stored, "every fix once, oldest first")
        #expect(try await beekon.storeReport().openBatches == 0)
    }

    /// SY-7 on the batch on the wire with the next one prepared: a retryable (503), an
    /// unauthorized without refresh (401), a permanent (413, 404) or a rejected (400) answer
    /// sends nothing more; the prepared batch stays queued unmarked under its id, and the
    /// next drain starts from the oldest unacknowledged fix.
    @Test(arguments: [503, 401, 413, 404, 400])
    func aFailureOnTheBatchOnTheWireSendsNothingMoreAndMarksNothing(status: Int) async throws {
        let transport = ScriptedTransport()
        let (h, beekon) = try await fiveFixes(transport)
        defer { withExtendedLifetime(h) {} }
        await transport.enqueue(statuses: status)
        let failed = try await beekon.sync()
        #expect(await transport.requests.count == 1, "the prepared batch did not go out")
        #expect(failed.uploadedLocations == 0 && failed.failure != nil, "\(failed)")
        let rejected = status == 400 ? 2 : 0
        #expect(try await beekon.pendingUploadCount() == 5 - rejected, "nothing marked uploaded")
        #expect(try await beekon.rejectedLocations().count == rejected)
        #expect(try await beekon.storeReport().openBatches == (status == 400 ? 1 : 2), "the failed batch and the one prepared")
        let first = await transport.requests[0].envelope
        try await beekon.sync()
        let sent = await transport.requests.dropFirst().map(\.envelope)
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture).map(\.id)
        if status == 400 {
            #expect(sent.map(\.locations.count) == [2, 1])
            #expect(sent.flatMap(\.locations).map(\.id) == Array(stored.dropFirst(2)))
        } else {
            #expect(sent.map(\.locations.count) == [2, 2, 1])
            #expect(sent[0].batchId == first.batchId && sent[0].locations == first.locations, "the oldest first, same id")
            #expect(sent.flatMap(\.locations).map(\.id) == stored, "every fix once, oldest first")
        }
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    /// AU-6 with a batch prepared ahead: a 401 on N refreshes the token and retries N; the
    /// batch prepared meanwhile goes out after it with the new token, never the rejected one.
    @Test func aRefreshAfterA401CoversTheBatchPreparedMeanwhile() async throws {
        let h = Harness()
        let t = RoutingTransport()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(tokenAnswer(#"{"access_token":"after-401","expires_in":"3600"}"#))
        let beekon = h.beekon(transport: t, secrets: InMemorySecretStore())
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: 2, auth: authRecipe())))
        try await beekon.start()
        await h.provider.send((0..<5).map { fix(Double($0), north: Double($0) * 10) })
        let outcome = try await beekon.sync()
        let uploads = await t.ingest.requests
        #expect(uploads.map { $0.headers["Authorization"] } == ["Bearer seed-access-AAAA"] + Array(repeating: "Bearer after-401", count: 3))
        let ids = uploads.map(\.envelope.batchId)
        try #require(ids.count >= 2)
        #expect(ids[0] == ids[1] && Set(ids).count == 3, "N retried, then N+1 and N+2")
        #expect(outcome.uploadedLocations == 5 && outcome.pending == 0, "\(outcome)")
    }

    /// A process that dies after the server accepted N but before N's mark committed
    /// (injected: the mark aborts, as a kill at that instant leaves it) re-sends N on the
    /// next launch under the same batch id and rows; a server deduping by fix id stores
    /// every fix once. Nothing is skipped.
    @Test func aCrashBetweenTheAnswerAndTheMarkResendsTheBatchAndTheServerDedupes() async throws {
        let server = DedupingServer()
        let (h, dying) = try await fiveFixes(server)
        var sideConfig = Configuration()
        sideConfig.busyMode = .timeout(30)
        let side = try DatabaseQueue(path: h.dir.db, configuration: sideConfig)
        try await side.write { db in
            try db.execute(sql: "CREATE TRIGGER fail_ack BEFORE DELETE ON upload_batch BEGIN SELECT RAISE(ABORT, 'killed'); END")
        }
        _ = try await dying.sync()
        let before = await server.accepted
        #expect(before.count >= 2, "the server accepted batches whose marks never landed")
        await dying.shutdown()
        try await side.write { db in try db.execute(sql: "DROP TRIGGER fail_ack") }
        try side.close()

        let relaunched = h.beekon(transport: server)
        #expect(try await relaunched.resumeIfNeeded(), "the relaunch resumes the session and its sync")
        let outcome = try await relaunched.sync()
        let batches = await server.accepted
        #expect(batches.dropFirst(before.count).first?.batchId == before.first?.batchId, "the oldest unmarked batch goes first, same id")
        #expect(await server.storedFixes.count == 5, "every fix stored once at the server")
        #expect(await server.duplicates > 0, "re-sent fixes were deduped, not stored twice")
        #expect(outcome.pending == 0 && outcome.failure == nil, "\(outcome)")
        let stored = try await relaunched.history(from: .distantPast, to: .distantFuture).map(\.id)
        #expect(await server.storedFixes == stored, "in order, none skipped")
    }
}

/// A server stand-in at the transport seam: accepts every batch, stores each fix id once
/// (as beekon-ingest dedupes by fix id) and counts the repeats.
actor DedupingServer: HTTPTransport {
    private(set) var accepted: [WireEnvelope] = []
    private(set) var storedFixes: [UUID] = []
    private(set) var duplicates = 0
    private var seen: Set<UUID> = []

    func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let envelope = request.envelope
        accepted.append(envelope)
        for l in envelope.locations {
            if seen.insert(l.id).inserted { storedFixes.append(l.id) } else { duplicates += 1 }
        }
        return HTTPResponse(status: 200)
    }
}
