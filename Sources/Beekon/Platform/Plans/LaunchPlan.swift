import Foundation

/// What a fresh process does about tracking on its first use (LC-6, BY-10): an app that
/// the OS relaunched (significant-location change, region event, background refresh)
/// resumes the persisted session by itself, with no call from the host app.
package enum LaunchPlan: Sendable, Hashable {
    /// Resume this persisted session (same id, gate continuing from its last stored fix).
    case resume(UUID)
    /// Stay idle: nothing was being tracked (or the host stopped it).
    case idle
    /// Nothing to decide: auto-resume is off, already decided, or already tracking.
    case none

    /// The decision for one first use.
    /// - Parameters:
    ///   - autoResume: whether this instance resumes by itself (`Beekon.shared` on Apple platforms).
    ///   - alreadyDecided: whether this process already made the decision (it is made once).
    ///   - tracking: the running session, if any.
    ///   - persistedIntent: the session the database says was being tracked.
    package static func decide(autoResume: Bool, alreadyDecided: Bool, tracking: UUID?, persistedIntent: UUID?) -> LaunchPlan {
        guard autoResume, !alreadyDecided, tracking == nil else { return .none }
        return persistedIntent.map { .resume($0) } ?? .idle
    }
}
