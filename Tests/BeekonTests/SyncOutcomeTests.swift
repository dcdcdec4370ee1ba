import BeekonTestSupport
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation
import Testing

/// `sync()` says what its drain did (SY-3, SY-7, SY-8), and a status is
/// stored before it is published (an agent reacting to it finds the database work done).
@Suite("sync() outcome")
struct SyncOutcomeTests {
    let h = Harness()
    let transport = ScriptedTransport()

    /// A tracking SDK syncing to the scripted transport in batches of `batchSize`, with
    /// `fixes` stored and nothing sent yet; `answers` are the next statuses.
    func tracking(fixes: Int, batchSize: Int = 100, answers: [Result<HTTPResponse, HTTPTransportError>]) async throws -> Beekon {
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, batchSize: batchSize)))
        try await beekon.start()
        await h.provider.send((0..<fixes).map { fix(Double($0), north: Double($0) * 10) })
        for answer in answers { await transport.enqueue(answer) }
        return beekon
    }

    static func status(_ code: Int) -> Result<HTTPResponse, HTTPTransportError> { .success(HTTPResponse(status: code)) }

    @Test func aDrainThatEmptiesTheQueueReportsWhatWentOut() async throws {
        let beekon = try await tracking(fixes: 5, batchSize: 2, answers: [])
        #expect(try await beekon.sync() == SyncOutcome(uploadedLocations: 5, pending: 0))
    }

    /// SY-7: a transient failure after one accepted batch: the counts, the reason and the
    /// engine's own next attempt, equal to the `retrying` status.
    @Test func aTransientFailureReportsPendingRowsAndTheNextAttempt() async throws {
        let beekon = try await tracking(fixes: 5, batchSize: 2, answers: [Self.status(200), Self.status(503)])
        let outcome = try await beekon.sync()
        // randomUnit 0: the first backoff is 2.5 s.
        let next = h.clock.now().addingTimeInterval(2.5)
        #expect(outcome == SyncOutcome(uploadedLocations: 2, pending: 3, failure: .transient("HTTP 503"), nextAttempt: next))
        #expect(beekon.currentSyncStatus == .retrying(nextAttempt: next))
        #expect(
            try await beekon.storeReport().lastSyncOutcome == "retrying at \(WireTimestamp(next))",
            "stored by the time sync() returns")
    }

    /// SY-7: a failure that needs a person or the next interval has no next attempt.
    @Test func aHeldFailureHasNoNextAttempt() async throws {
        let beekon = try await tracking(fixes: 2, answers: [Self.status(413)])
        #expect(try await beekon.sync() == SyncOutcome(pending: 2, failure: .held(.permanent(status: 413))))
    }

    @Test func aNetworkErrorIsTransientWithItsReason() async throws {
        let beekon = try await tracking(fixes: 1, answers: [.failure(.network("connection closed before the answer"))])
        let outcome = try await beekon.sync()
        #expect(outcome.failure == .transient("network error: connection closed before the answer"))
        #expect(outcome.pending == 1 && outcome.nextAttempt != nil)
    }

    /// Every status is stored before subscribers see it: when `retrying` arrives, the
    /// stored outcome already says so.
    @Test func retryingIsStoredBeforeItIsPublished() async throws {
        let beekon = try await tracking(fixes: 1, answers: [Self.status(503)])
        let seen = Task { () -> String? in
            for await status in beekon.syncStatus {
                guard case .retrying = status else { continue }
                return try? await beekon.storeReport().lastSyncOutcome
            }
            return nil
        }
        try await beekon.sync()
        let stored = await seen.value
        #expect(stored == "\(beekon.currentSyncStatus)", "stored \(stored ?? "nil"), published \(beekon.currentSyncStatus)")
    }
}
