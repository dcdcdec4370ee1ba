import Logging
import ServiceLifecycle

/// Runs a service whose graceful shutdown may never end, and cancels it `grace` after a
/// graceful shutdown began if it has not finished by then.
///
/// `PostgresClient` is such a service: under a CPU hog, and after its database was dropped
/// under a running server, its graceful shutdown was seen to hang for good while every other
/// service had finished (the test servers' lifecycle trail named it), so the server never
/// exited. Cancelling its run task is the client's documented way to stop it. A service that
/// finishes on its own returns at once; the grace only bounds a hang.
struct BoundedShutdown: Service, CustomStringConvertible {
    let service: any Service
    let grace: Duration
    let logger: Logger

    init(_ service: any Service, grace: Duration, logger: Logger) {
        self.service = service
        self.grace = grace
        self.logger = logger
    }

    /// The wrapped service's name, as the service group logs it.
    var description: String { String(describing: service) }

    func run() async throws {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await service.run()
                return true
            }
            group.addTask { [grace] in
                // Returns (throws) only once a graceful shutdown began, or when cancelled.
                try? await gracefulShutdown()
                guard !Task.isCancelled else { return false }
                try? await Task.sleep(for: grace)  // bounds a hang only; a prompt service has returned by then
                return false
            }
            defer { group.cancelAll() }
            if let finished = try await group.next(), !finished, !Task.isCancelled {
                logger.warning("a service did not finish its graceful shutdown in time; cancelled", metadata: ["service": "\(description)"])
            }
        }
    }
}
