/// A storage failure: the server's own fault, answered with 503 so devices retry.
package enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The database could not be opened or reached.
    case unavailable(String)
    /// A statement failed.
    case queryFailed(String)
    /// The schema could not be created or upgraded.
    case migrationFailed(String)

    package var description: String {
        switch self {
        case .unavailable(let why): return "database unavailable: \(why) — check --database and that the server is running"
        case .queryFailed(let why): return "database query failed: \(why)"
        case .migrationFailed(let why): return "database migration failed: \(why) — check the role's permissions"
        }
    }
}
