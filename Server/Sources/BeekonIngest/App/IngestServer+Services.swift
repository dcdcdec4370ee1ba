import Logging
import ServiceLifecycle

extension IngestServer {
    /// Runs `services` (e.g. the PostgreSQL pool) while `body` runs, then cancels them.
    /// For one-shot commands and tools that use a store without the HTTP server.
    package static func withServices<T: Sendable>(
        _ services: [any Service], logger: Logger, _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            for service in services { group.addTask { try await service.run() } }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
