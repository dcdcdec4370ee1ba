import Logging
import ServiceLifecycle

/// Runs a service whose graceful shutdown may never end, and stops waiting for it `grace`
/// after a graceful shutdown began if it has not finished by then: its run task is cancelled
/// and left behind, so the server's stop completes.
///
/// `PostgresClient` is such a service: under a CPU hog, and after its database was dropped
/// under a running server, its graceful shutdown was seen to hang for good while every other
/// service had finished (the test servers' lifecycle trail named it), so the server never
/// exited. Cancelling its run task is the client's documented way to stop it, but a hung client
/// was seen not to return even then (CI, 2026-11-28: the trail ended at its graceful shutdown
/// with the bound in place), so the bound does not wait for the cancelled task either: the
/// process is stopping, and whatever the task still holds goes with it. A service that
/// finishes on its own returns at once, with its error if it threw; the grace only bounds a hang.
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

    /// How the wait ended.
    private enum End: Sendable {
        case finished(Result<Void, any Error>)
        case overran
        case cancelled
    }

    func run() async throws {
        // The service runs in a task of its own (it inherits the graceful-shutdown signal, a
        // task-local), so that the wait for it can be given up; a stream carries its end.
        let (ends, end) = AsyncStream<Result<Void, any Error>>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let inner = Task { [service] in
            do {
                try await service.run()
                end.yield(.success(()))
            } catch {
                end.yield(.failure(error))
            }
            end.finish()
        }
        let outcome = await withTaskCancellationHandler {
            await withTaskGroup(of: End.self) { group in
                group.addTask {
                    for await result in ends { return .finished(result) }
                    return .cancelled  // only when this wait is cancelled
                }
                group.addTask { [grace] in
                    // Returns (throws) only once a graceful shutdown began, or when cancelled.
                    try? await gracefulShutdown()
                    guard !Task.isCancelled else { return .cancelled }
                    try? await Task.sleep(for: grace)  // bounds a hang only; a prompt service has returned by then
                    return Task.isCancelled ? .cancelled : .overran
                }
                defer { group.cancelAll() }
                return await group.next() ?? .cancelled
            }
        } onCancel: {
            inner.cancel()
        }
        switch outcome {
        case .finished(let result):
            try result.get()
        case .overran:
            inner.cancel()
            logger.warning(
                "a service did not finish its graceful shutdown in time; cancelled and no longer awaited",
                metadata: ["service": "\(description)"])
        case .cancelled:
            inner.cancel()
        }
    }
}
