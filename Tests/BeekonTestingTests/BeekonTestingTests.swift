import Beekon
import BeekonPrimitives
import BeekonTesting
import Foundation
import Testing

@Suite("Test doubles behave as documented")
struct BeekonTestingTests {
    @Test func testClockWakesSleepersInDeadlineOrderOnlyWhenAdvanced() async throws {
        let clock = TestClock()
        let order = Locked<[String]>([])
        let a = Task {
            try await clock.sleep(for: .seconds(20))
            order.withLock { $0.append("a") }
        }
        let b = Task {
            try await clock.sleep(for: .seconds(10))
            order.withLock { $0.append("b") }
        }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(9))
        #expect(clock.sleeperCount == 2)
        clock.advance(by: .seconds(11))
        try await a.value
        try await b.value
        #expect(order.value.sorted() == ["a", "b"])
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingASleeperThrows() async {
        let clock = TestClock()
        let t = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        t.cancel()
        await #expect(throws: CancellationError.self) { try await t.value }
        #expect(clock.sleeperCount == 0)
    }

    /// The lost wake-up that hung RangingBudgetTests in full runs: a task cancelled before its
    /// sleep registers ran `onCancel` with no sleeper to resume, then registered and slept forever.
    @Test func aTaskCancelledBeforeItSleepsThrowsInsteadOfSleepingForever() async {
        let clock = TestClock()
        let t = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await t.value }
        #expect(clock.sleeperCount == 0)
    }

    /// The shape of a ranging wake's wait (BY-5): a reading races a deadline sleep, the loser is
    /// cancelled at any point of its registration. Every race must finish with no sleeper left.
    @Test func racesOfAReadingAgainstADeadlineAllFinish() async {
        let clock = TestClock()
        for _ in 0..<2_000 {
            let first: Int? = await withTaskGroup(of: Int?.self) { group in
                group.addTask { 1 }
                group.addTask {
                    try? await clock.sleep(for: .seconds(5))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            #expect(first == 1)
        }
        #expect(clock.sleeperCount == 0)
    }

    @Test func scriptedProviderSendReturnsOnlyAfterTheConsumerProcessedTheFix() async throws {
        let provider = ScriptedProvider()
        let processed = Locked<[String]>([])
        let stream = try await provider.start(mode: .balanced)
        // The consumer is not yet iterating when the first fix is sent: the sender must still wait.
        let sender = Task {
            for i in 0..<5 {
                await provider.send(RawFix(timestamp: Date(timeIntervalSince1970: Double(i)), latitude: 0, longitude: 0))
                #expect(processed.value.count == i + 1, "send \(i) returned before its fix was processed")
            }
            await provider.finish()
        }
        for try await fix in stream {
            await Task.yield()
            processed.withLock { $0.append("\(fix.timestamp.timeIntervalSince1970)") }
        }
        await sender.value
        #expect(processed.value.count == 5)
    }

    @Test func scriptedTransportAnswersFromItsScriptThenTheFallback() async throws {
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: 503)
        let request = HTTPRequest(url: URL(string: "http://127.0.0.1/x")!)
        #expect(try await transport.send(request).status == 503)
        #expect(try await transport.send(request).status == 200)
        await transport.waitForRequests(2)
        #expect(await transport.requests.count == 2)
    }
}
