import BeekonLoad
import Foundation
import Testing

/// A clock that moves only when the test says: sleepers wait until `advance(to:)` passes their deadline.
final class ManualClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol, Sendable {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [(Instant, CheckedContinuation<Void, Never>)] = []
    private var waiter: CheckedContinuation<Instant, Never>?

    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resume: CheckedContinuation<Instant, Never>?
            let due: Bool = lock.withLock {
                if deadline <= current { return true }
                sleepers.append((deadline, c))
                return false
            }
            if due {
                c.resume()
                return
            }
            resume = lock.withLock {
                defer { waiter = nil }
                return waiter
            }
            resume?.resume(returning: deadline)
        }
    }

    /// Suspends until someone sleeps; the earliest deadline.
    func nextDeadline() async -> Instant {
        await withCheckedContinuation { (c: CheckedContinuation<Instant, Never>) in
            let earliest: Instant? = lock.withLock {
                if let first = sleepers.map(\.0).min() { return first }
                waiter = c
                return nil
            }
            if let earliest { c.resume(returning: earliest) }
        }
    }

    /// Moves the time to `instant`, waking every sleeper due by then.
    func advance(to instant: Instant) {
        let due: [CheckedContinuation<Void, Never>] = lock.withLock {
            current = instant
            let ready = sleepers.filter { $0.0 <= instant }.map(\.1)
            sleepers.removeAll { $0.0 <= instant }
            return ready
        }
        for c in due { c.resume() }
    }
}

/// Records what the sender saw; holds every answer until `release()`.
final class SendLog: @unchecked Sendable {
    private let lock = NSLock()
    private var started: [(index: Int, due: Duration, at: Duration)] = []
    private var gate: [CheckedContinuation<Void, Never>] = []
    private var open = false

    func begin(_ index: Int, due: ManualClock.Instant, at: ManualClock.Instant) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go: Bool = lock.withLock {
                started.append((index, due.offset, at.offset))
                if open { return true }
                gate.append(c)
                return false
            }
            if go { c.resume() }
        }
    }

    var starts: [(index: Int, due: Duration, at: Duration)] { lock.withLock { started } }

    func release() {
        let waiting: [CheckedContinuation<Void, Never>] = lock.withLock {
            open = true
            defer { gate = [] }
            return gate
        }
        for c in waiting { c.resume() }
    }
}

@Suite("Load generator (issue 32: open loop, no coordinated omission)")
struct OpenLoopTests {
    @Test("the schedule spaces requests 1/rate apart and counts rate × duration")
    func schedule() {
        let s = OpenLoopSchedule(rate: 400, duration: 2.5)
        #expect(s.count == 1_000)
        #expect(s.offset(of: 0) == .zero)
        #expect(s.offset(of: 1) == .microseconds(2_500))
        #expect(s.offset(of: 999) == .microseconds(2_497_500))
        #expect(OpenLoopSchedule(rate: 0.1, duration: 1).count == 1)
    }

    // A closed loop (waiting for each answer) would never start request 1 here: the time limit turns that hang into a failure.
    @Test("every request starts at its due time although no earlier one was answered (open loop)", .timeLimit(.minutes(1)))
    func sendsOnScheduleWhileNothingAnswers() async {
        let clock = ManualClock()
        let log = SendLog()
        let schedule = OpenLoopSchedule(rate: 10, count: 5)
        let run = Task { await OpenLoop.run(schedule, clock: clock) { i, due in await log.begin(i, due: due, at: clock.now) } }
        // Advance to each deadline the runner sleeps for; nothing has been answered meanwhile.
        for _ in 1..<schedule.count { clock.advance(to: await clock.nextDeadline()) }
        // The last request starts once its deadline passed; wait for its start without sleeping.
        while log.starts.count < schedule.count { await Task.yield() }
        let starts = log.starts.sorted { $0.index < $1.index }
        #expect(starts.map(\.index) == [0, 1, 2, 3, 4])
        #expect(starts.map(\.due) == [0, 100, 200, 300, 400].map { Duration.milliseconds($0) })
        #expect(starts.map(\.at) == starts.map(\.due))
        log.release()
        await run.value
    }

    @Test("a late start still reports the due time, so latency counts the delay (no coordinated omission)", .timeLimit(.minutes(1)))
    func lateStartKeepsDueTime() async {
        let clock = ManualClock()
        let log = SendLog()
        log.release()
        let run = Task {
            await OpenLoop.run(OpenLoopSchedule(rate: 100, count: 3), clock: clock) { i, due in await log.begin(i, due: due, at: clock.now)
            }
        }
        _ = await clock.nextDeadline()
        // The runner wakes 1 s late (a stalled machine): the two due requests go out at once, each with its own due time.
        clock.advance(to: ManualClock.Instant(offset: .seconds(1)))
        await run.value
        let starts = log.starts.sorted { $0.index < $1.index }
        #expect(starts.map(\.due) == [0, 10, 20].map { Duration.milliseconds($0) })
        #expect(starts.dropFirst().allSatisfy { $0.at == .seconds(1) })
        let recorder = LatencyRecorder()
        for s in starts { recorder.record(s.at - s.due) }
        #expect(recorder.report(elapsed: 1).millis(at: 100) >= 989)
    }
}
