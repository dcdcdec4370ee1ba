import BeekonPrimitives
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

    /// Ignores graceful shutdown and cancellation alike (a hung `PostgresClient` was seen not to
    /// return when cancelled); says "waiting" once the test can release it, "released" when it was.
    struct Deaf: Service {
        let release: Locked<CheckedContinuation<Void, Never>?>
        let said: AsyncStream<String>.Continuation
        func run() async throws {
            await withCheckedContinuation { c in
                release.withLock { $0 = c }
                said.yield("waiting")
            }
            said.yield("released")
        }
    }

    /// Fails at once.
    struct Failing: Service {
        struct Boom: Error {}
        func run() async throws { throw Boom() }
    }

    @Test("a service deaf to cancellation no longer holds the stop: after the grace it is cancelled and not awaited")
    func aServiceDeafToCancellationIsLeftBehind() async throws {
        let release = Locked<CheckedContinuation<Void, Never>?>(nil)
        let (said, continuation) = AsyncStream<String>.makeStream()
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [BoundedShutdown(Deaf(release: release, said: continuation), grace: .milliseconds(50), logger: testLogger)],
                logger: testLogger))
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value  // before the change this waited for the deaf service for good
        // The service is still running, left behind; release it so the test ends clean.
        var it = said.makeAsyncIterator()
        #expect(await it.next() == "waiting")
        release.withLock { $0?.resume() }
        #expect(await it.next() == "released")
    }

    @Test("a service that fails passes its error through the bound")
    func aFailureIsPassedThrough() async {
        await #expect(throws: Failing.Boom.self) {
            try await BoundedShutdown(Failing(), grace: .seconds(10), logger: testLogger).run()
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
