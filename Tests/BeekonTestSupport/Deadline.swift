import Foundation

/// Bounded waits: the deadline is a failure, never a synchronisation point.
public enum Deadline {
    /// The wait ran past its limit.
    public struct Expired: Error, CustomStringConvertible {
        /// What was awaited, and the state when the wait gave up.
        public var description: String
        /// Creates the error.
        public init(description: String) { self.description = description }
    }

    /// `body`'s value, or `Expired` once `limit` has passed.
    public static func run<T: Sendable>(
        _ limit: Duration, _ what: String,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw Expired(description: "timed out after \(limit) waiting for \(what)")
            }
            return value
        }
    }
}
