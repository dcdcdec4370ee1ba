@testable import BeekonAgent
import Beekon
import Foundation
import Testing

/// The agent's final drain decides on `sync()`'s outcome alone: exit 0 when
/// nothing is pending, 3 on a failure that needs a person or at the deadline, else sync
/// again at the engine's next attempt.
struct DrainVerdictTests {
    let now = Date(timeIntervalSince1970: 1_767_225_600)
    var deadline: Date { now.addingTimeInterval(60) }

    func decide(_ outcome: SyncOutcome, at: Date? = nil) -> DrainVerdict {
        DrainVerdict.decide(outcome, now: at ?? now, deadline: deadline, timeout: 60)
    }

    @Test func nothingPendingIsComplete() {
        #expect(decide(SyncOutcome(uploadedLocations: 7, pending: 0)) == .complete)
        #expect(decide(SyncOutcome(pending: 0, failure: .transient("x"))) == .complete)
    }

    @Test func aHeldFailureExits3KeepingTheRows() {
        #expect(
            decide(SyncOutcome(pending: 4, failure: .held(.auth(status: 401))))
                == .exit(code: 3, message: "upload failed: auth (HTTP 401); 4 rows kept for a later run"))
    }

    @Test func aTransientFailureSyncsAgainAtTheNextAttemptBeforeTheDeadline() {
        let next = now.addingTimeInterval(5)
        #expect(decide(SyncOutcome(pending: 4, failure: .transient("HTTP 503"), nextAttempt: next)) == .retry(at: next))
        #expect(
            decide(SyncOutcome(pending: 4, failure: .transient("HTTP 503"), nextAttempt: now.addingTimeInterval(-1))) == .retry(at: now))
    }

    @Test func aNextAttemptAfterTheDeadlineExits3WithTheReason() {
        let late = SyncOutcome(pending: 4, failure: .transient("network error: TLS"), nextAttempt: deadline.addingTimeInterval(1))
        #expect(
            decide(late)
                == .exit(
                    code: 3, message: "upload queue not drained within 60 s (last failure: network error: TLS); 4 rows kept for a later run"
                ))
        let past = SyncOutcome(pending: 4, failure: .transient("HTTP 503"), nextAttempt: now.addingTimeInterval(1))
        #expect(
            decide(past, at: deadline)
                == .exit(code: 3, message: "upload queue not drained within 60 s (last failure: HTTP 503); 4 rows kept for a later run"))
    }

    @Test func progressWithoutAFailureSyncsAgainAtOnce() {
        #expect(decide(SyncOutcome(uploadedLocations: 100, pending: 3)) == .retry(at: now))
        #expect(
            decide(SyncOutcome(pending: 3)) == .exit(code: 3, message: "upload queue not drained within 60 s; 3 rows kept for a later run"))
    }
}
