import BeekonWire
import Foundation

/// The locate guard's persisted state (BY-2): the host's `LocatePolicy` and when a request was
/// last answered, so that a process the OS started for a silent push refuses what the user
/// refused and keeps the battery interval of the process before it.
extension LocationStore {
    private static let locatePolicyKey = "locate_policy"
    private static let locateAnsweredKey = "locate_last_answered"

    /// The persisted policy (nil: never set) and the time of the last answer (nil: none).
    func locateGuard() async throws(BeekonError) -> (policy: LocatePolicy?, lastAnswered: Date?) {
        let (json, answered) = try await read("reading the locate policy") { db in
            (try Self.meta(db, Self.locatePolicyKey), try Self.meta(db, Self.locateAnsweredKey))
        }
        let policy = try json.map { json throws(BeekonError) in
            do { return try JSONDecoder().decode(LocatePolicy.self, from: Data(json.utf8)) } catch {
                throw .storage("the stored locate policy is unreadable: \(error)")
            }
        }
        return (policy, answered.flatMap(Int64.init).map { WireTimestamp(millis: $0).date })
    }

    /// Persists the host's policy.
    func saveLocatePolicy(_ policy: LocatePolicy) async throws(BeekonError) {
        let json: String
        do { json = String(decoding: try JSONEncoder().encode(policy), as: UTF8.self) } catch {
            throw .storage("could not encode the locate policy: \(error)")
        }
        try await write("saving the locate policy") { db in try Self.setMeta(db, Self.locatePolicyKey, json) }
    }

    /// Persists the time of the last answered request.
    func saveLocateAnswered(at date: Date) async throws(BeekonError) {
        let millis = String(WireTimestamp(date).millis)
        try await write("saving the last locate answer") { db in try Self.setMeta(db, Self.locateAnsweredKey, millis) }
    }
}
