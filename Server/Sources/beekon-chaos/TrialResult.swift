import Foundation

/// What one trial found: its counters (fixes stored and at the server, and every invariant's
/// violations) and one line per problem.
struct TrialResult: Sendable {
    /// The counters, by name.
    static let keys = [
        "stored", "at_server", "lost", "duplicated", "foreign", "session_changes", "server_errors", "crashes",
        "events_stored", "events_at_server", "events_lost", "events_duplicated", "viewer_lost", "viewer_dup",
    ]
    /// The counters whose non-zero value fails a trial.
    static let violations = [
        "lost", "duplicated", "foreign", "session_changes", "server_errors", "crashes", "events_lost", "events_duplicated",
        "viewer_lost", "viewer_dup",
    ]

    /// Counter values (missing ones are 0).
    var counts: [String: Int] = [:]
    /// What went wrong, for the log.
    var problems: [String] = []

    /// A counter's value.
    subscript(key: String) -> Int {
        get { counts[key, default: 0] }
        set { counts[key] = newValue }
    }

    /// Whether any invariant was broken.
    var failed: Bool { Self.violations.contains { self[$0] != 0 } }

    /// Adds another trial's counters.
    mutating func add(_ other: TrialResult) {
        for (key, value) in other.counts { self[key] += value }
    }
}
