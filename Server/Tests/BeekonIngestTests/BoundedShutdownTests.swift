import Logging
import ServiceLifecycle
import Testing

@testable import BeekonIngest

/// ``BoundedShutdown``: a service that never ends its graceful shutdown is cancelled after the
/// grace (the hung `PostgresClient` of a stopping server); one that ends on its own is untouched.
@Suite struct BoundedShutdownTests {
    /// Ignores graceful shutdown; ends only when cancelled, and says so.
    struct Stubborn: Service {
        let ended: AsyncStream<String>.Continuation
        func run() async throws {
            let (never, _) = AsyncStream<Void>.makeStream()
            for await _ in never {}  // returns only when this task is cancelled
            ended.yield("cancelled")
        }
    }

    /// Ends as soon as a graceful shutdown begins.
    struct Prompt: Service {
        let ended: AsyncStream<String>.Continuation
        func run() async throws {
            try? await gracefulShutdown()
            ended.yield(Task.isCancelled ? "cancelled" : "finished")
        }
    }

    @Test("a service that hangs in its graceful shutdown is cancelled after the grace; a prompt one finishes by itself")
    func aHungServiceIsCancelledAfterTheGrace() async throws {
        for stubborn in [true, false] {
            let (ended, continuation) = AsyncStream<String>.makeStream()
            let inner: any Service = stubborn ? Stubborn(ended: continuation) : Prompt(ended: continuation)
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [BoundedShutdown(inner, grace: .milliseconds(50), logger: testLogger)], logger: testLogger))
            let running = Task { try await group.run() }
            await group.triggerGracefulShutdown()
            try await running.value  // a hung service without the bound never returns here
            var it = ended.makeAsyncIterator()
            #expect(await it.next() == (stubborn ? "cancelled" : "finished"))
        }
    }
}
