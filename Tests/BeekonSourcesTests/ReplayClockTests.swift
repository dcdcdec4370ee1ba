import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("ReplayClock")
struct ReplayClockTests {
    let real = ManualRealClock()

    @Test("before the first fix now() is real time; then the fix time plus real time elapsed")
    func nowFollowsFixes() {
        let clock = ReplayClock(realClock: real)
        #expect(clock.now() == real.now())
        #expect(!clock.hasStarted)
        let t = Date(timeIntervalSince1970: 1_500_000_000)
        clock.advance(to: t)
        #expect(clock.hasStarted)
        #expect(clock.now() == t)
        real.advance(by: 5)
        #expect(clock.now() == t.addingTimeInterval(5))
        #expect(clock.realNow() == real.now())
    }

    @Test("once started it never goes backwards")
    func monotonic() {
        let clock = ReplayClock(realClock: real)
        let t = Date(timeIntervalSince1970: 1_500_000_000)
        clock.advance(to: t)
        clock.advance(to: t.addingTimeInterval(-60))
        #expect(clock.now() == t)
        real.advance(by: 2)
        clock.advance(to: t.addingTimeInterval(1))  // older than now (t + 2)
        #expect(clock.now() == t.addingTimeInterval(2))
        clock.advance(to: t.addingTimeInterval(10))
        #expect(clock.now() == t.addingTimeInterval(10))
    }

    @Test("a replay jumping past the deadline wakes a sleeper; a jump short of it does not")
    func advanceWakesSleeper() async throws {
        let clock = ReplayClock(realClock: real)
        let t = Date(timeIntervalSince1970: 1_500_000_000)
        clock.advance(to: t)
        let sleeper = Task { try await clock.sleep(for: .seconds(300)) }
        await eventually("sleeper registered") { clock.sleeperCount == 1 }
        clock.advance(to: t.addingTimeInterval(299))
        await settle()
        #expect(clock.sleeperCount == 1)
        clock.advance(to: t.addingTimeInterval(301))
        try await sleeper.value
        #expect(clock.sleeperCount == 0)
    }

    @Test("after the replay ends a sleeper waits real seconds (counted from the last jump)")
    func realTimeAfterEnd() async throws {
        let clock = ReplayClock(realClock: real)
        let t = Date(timeIntervalSince1970: 1_500_000_000)
        clock.advance(to: t)
        let sleeper = Task { try await clock.sleep(for: .seconds(300)) }
        await eventually("sleeper waiting on the real clock") { real.sleeperCount == 1 }
        clock.advance(to: t.addingTimeInterval(200))  // replay jumps 200 s: 100 real seconds left
        await eventually("timer rescheduled") { real.sleeperCount == 1 && clock.sleeperCount == 1 }
        real.advance(by: 99)
        await settle()
        #expect(clock.sleeperCount == 1)
        real.advance(by: 1.5)
        try await sleeper.value
        #expect(clock.now() == t.addingTimeInterval(200 + 100.5))
    }

    @Test("a sleep begun before the first fix keeps its remaining duration across the jump")
    func sleepAcrossFirstFix() async throws {
        let clock = ReplayClock(realClock: real)
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await eventually("sleeper registered") { clock.sleeperCount == 1 }
        let t = Date(timeIntervalSince1970: 1_000_000_000)  // years before the real time
        clock.advance(to: t)
        clock.advance(to: t.addingTimeInterval(59))
        await settle()
        #expect(clock.sleeperCount == 1)
        clock.advance(to: t.addingTimeInterval(61))
        try await sleeper.value
    }

    @Test("cancellation ends a sleep with CancellationError and leaves no waiter")
    func cancellation() async {
        let clock = ReplayClock(realClock: real)
        clock.advance(to: Date(timeIntervalSince1970: 1_500_000_000))
        let sleeper = Task { try await clock.sleep(for: .seconds(3600)) }
        await eventually("sleeper registered") { clock.sleeperCount == 1 }
        sleeper.cancel()
        let result = await sleeper.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.sleeperCount == 0)
        await eventually("real timer released") { real.sleeperCount == 0 }

        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test("many concurrent sleepers wake in deadline order as the replay advances")
    func manySleepers() async throws {
        let clock = ReplayClock(realClock: real)
        let t = Date(timeIntervalSince1970: 1_500_000_000)
        clock.advance(to: t)
        let tasks = (1...20).map { i in
            Task {
                try await clock.sleep(for: .seconds(Double(i) * 10))
                return i
            }
        }
        await eventually("all registered") { clock.sleeperCount == 20 }
        clock.advance(to: t.addingTimeInterval(105))
        for i in 1...10 { #expect(try await tasks[i - 1].value == i) }
        #expect(clock.sleeperCount == 10)
        clock.advance(to: t.addingTimeInterval(1000))
        for task in tasks { _ = try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("zero and negative sleeps return at once; the system clock path really sleeps")
    func trivialAndSystem() async throws {
        let clock = ReplayClock(realClock: real)
        try await clock.sleep(for: .zero)
        try await clock.sleep(for: .seconds(-5))
        let system = ReplayClock()
        let before = ContinuousClock.now
        try await system.sleep(for: .milliseconds(30))
        #expect(ContinuousClock.now - before >= .milliseconds(25))
    }
}
