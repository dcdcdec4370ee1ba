import Beekon
import BeekonTesting
import Foundation
import Testing
@testable import BeekonBeacons

/// A host budget on the test clock: each lease expires `seconds` after it begins, and records
/// when it was ended (iOS kills an app whose background task outlives its expiry).
final class FixedBudget: ExecutionBudget, @unchecked Sendable {
    let seconds: Double
    let clock: TestClock
    private let lock = NSLock()
    private var leases: [(expiry: Date, endedAt: Date?)] = []

    init(seconds: Double, clock: TestClock) {
        self.seconds = seconds
        self.clock = clock
    }

    var records: [(expiry: Date, endedAt: Date?)] { lock.withLock { leases } }

    func beginLease(named name: String) async -> any ExecutionLease {
        let index: Int = lock.withLock {
            leases.append((clock.now().addingTimeInterval(seconds), nil))
            return leases.count - 1
        }
        return Lease(budget: self, index: index)
    }

    struct Lease: ExecutionLease {
        let budget: FixedBudget
        let index: Int
        func remaining() async -> Duration? {
            let left = budget.records[index].expiry.timeIntervalSince(budget.clock.now())
            return .milliseconds(Int64(max(0, left) * 1000))
        }
        func end() async {
            budget.lock.withLock {
                if budget.leases[index].endedAt == nil { budget.leases[index].endedAt = budget.clock.now() }
            }
        }
    }
}

/// A replay source for one wake: delivers the readings from `start` on, moving the test clock to each.
final class WakeSource: @unchecked Sendable {
    private let readings: [BeaconReading]
    private let clock: TestClock
    private let lock = NSLock()
    private var index: Int

    init(_ readings: [BeaconReading], from start: Date, clock: TestClock) {
        self.readings = readings
        self.clock = clock
        index = readings.firstIndex { $0.time >= start } ?? readings.count
    }

    func next() -> BeaconReading? {
        let reading: BeaconReading? = lock.withLock {
            guard index < readings.count else { return nil }
            defer { index += 1 }
            return readings[index]
        }
        if let reading { clock.set(reading.time) }
        return reading
    }
}

/// Ranging under 10 s and 180 s background budgets over a replayed recording (SPEC BY-5).
@Suite struct RangingBudgetTests {
    static func run(
        budgetSeconds: Double, every period: Double, readings: [BeaconReading], tracker: ProximityTracker,
        store: any RangingStateStore
    ) async -> (wakes: [BeaconRangingSession.Wake], budget: FixedBudget) {
        let first = readings[0].time
        let clock = TestClock(start: first)
        let budget = FixedBudget(seconds: budgetSeconds, clock: clock)
        let session = BeaconRangingSession(tracker: tracker, budget: budget, clock: clock, store: store)
        var wakes: [BeaconRangingSession.Wake] = []
        var start = first
        while start <= readings[readings.count - 1].time {
            clock.set(start)
            let source = WakeSource(readings, from: start, clock: clock)
            wakes.append(await session.wake { source.next() })
            start = start.addingTimeInterval(period)
        }
        return (wakes, budget)
    }

    // Each wake waits for a reading racing a deadline sleep on the test clock and cancels the
    // loser; this once hung full parallel runs (a sleeper cancelled before it registered slept
    // forever: fixed in TestClock.sleep, see BeekonTestingTests.racesOfAReadingAgainstADeadlineAllFinish).
    @Test(
        "BY-5: 10 s and 180 s budgets over the two-scanner run — every wake stops and ends its lease a margin before expiry; entries persist across wakes",
        arguments: [(10.0, 60.0), (180.0, 200.0)])
    func budgets(_ budgetSeconds: Double, _ period: Double) async throws {
        // The first 10 minutes of the run (about 15,000 readings) keep the test quick.
        let all = BeaconReplay.ordered(BeaconRecording.read(contentsOf: BeaconData.twoScanners).readings)
        let readings = all.filter { $0.time.timeIntervalSince(all[0].time) < 600 }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-ranging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = FileRangingStateStore(url: dir.appendingPathComponent("state.json"))
        let (wakes, budget) = await Self.run(
            budgetSeconds: budgetSeconds, every: period, readings: readings,
            tracker: RecordingTests.twoScannerTracker(), store: store)
        #expect(wakes.count == Int((readings[readings.count - 1].time.timeIntervalSince(readings[0].time) / period).rounded(.down)) + 1)
        #expect(budget.records.count == wakes.count)
        for lease in budget.records {
            let ended = try #require(lease.endedAt, "a lease was never ended")
            // The replay jumps the clock to each reading, so a wake ends at the first reading past its
            // allowance (expiry − 5 s): never at expiry, and within a reading gap of the allowance.
            #expect(ended < lease.expiry.addingTimeInterval(-4), "ended \(ended) for expiry \(lease.expiry)")
        }
        #expect(wakes.dropLast().allSatisfy { $0.stop == .budget })
        let events = wakes.flatMap(\.events)
        // The beacons on the scanners enter once, in the first wake, and stay entered through every later wake.
        for (minor, scanner) in [(3, "Room201"), (4, "Room202")] {
            let own = events.filter { $0.identity.minor == minor && $0.scanner == scanner }
            #expect(own.map(\.type) == [.enter], "minor \(minor): \(own)")
            let firstWake = wakes.firstIndex { $0.events.contains { $0.identity.minor == minor && $0.scanner == scanner } }
            #expect(firstWake.map { $0 <= 1 } == true, "entered in wake \(String(describing: firstWake))")
        }
        #expect(store.load()?.entries.values.filter(\.trigger.inside).count ?? 0 >= 2)
    }

    @Test("BY-5: a dwell begun in one wake completes in the next; without the persisted state the entry would repeat or be late")
    func decisionAcrossWakes() async throws {
        let id = try #require(BeaconIdentity(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 1))
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        // Near (−50 dBm at a −59 dBm beacon) every 0.5 s during two wakes: 0–10 s and 6–16 s.
        let readings = (0..<40).map {
            BeaconReading(scanner: "s", identity: id, measuredPower: -59, rssi: -50, time: t0.addingTimeInterval(Double($0) / 2))
        }
        let tracker = ProximityTracker(
            regions: [], rule: ProximityRule(enterDistance: 1, exitDistance: 2, dwell: 4, silenceTimeout: 30),
            smoother: RSSISmoother(window: 30, trimFraction: 0.2, minimumSamples: 5))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-ranging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = FileRangingStateStore(url: dir.appendingPathComponent("state.json"))
        let clock = TestClock(start: t0)
        let budget = FixedBudget(seconds: 10, clock: clock)
        let session = BeaconRangingSession(tracker: tracker, budget: budget, clock: clock, store: store)
        let first = WakeSource(readings, from: t0, clock: clock)
        let wake1 = await session.wake { first.next() }
        #expect(wake1.events.isEmpty && wake1.stop == .budget, "known at 2 s, pending from then; 5 s of ranging end first")
        #expect(wake1.readings == 10)
        clock.set(t0.addingTimeInterval(6))
        let second = WakeSource(readings, from: t0.addingTimeInterval(6), clock: clock)
        let wake2 = await session.wake { second.next() }
        #expect(wake2.events.map(\.type) == [.enter])
        #expect(wake2.events.first?.timestamp == t0.addingTimeInterval(6), "the dwell from 2 s completes at the first reading of wake 2")
        clock.set(t0.addingTimeInterval(12))
        let third = WakeSource(readings, from: t0.addingTimeInterval(12), clock: clock)
        #expect(await session.wake { third.next() }.events.isEmpty, "entered already: fires once per entry")
        // Afresh (no store), the same second wake needs 2 s of samples and 4 s of dwell: past its 5 s.
        let fresh = BeaconRangingSession(
            tracker: tracker, budget: FixedBudget(seconds: 10, clock: clock), clock: clock,
            store: FileRangingStateStore(url: dir.appendingPathComponent("none/state.json")))
        clock.set(t0.addingTimeInterval(6))
        let again = WakeSource(readings, from: t0.addingTimeInterval(6), clock: clock)
        #expect(await fresh.wake { again.next() }.events.isEmpty)
    }

    @Test("BY-5: with no reading arriving, a wake still stops at the allowance (the clock, not the readings, ends it)")
    func stopsWithoutReadings() async {
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let budget = FixedBudget(seconds: 10, clock: clock)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-ranging-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: dir) }
        let session = BeaconRangingSession(
            tracker: ProximityTracker(regions: []), budget: budget, clock: clock,
            store: FileRangingStateStore(url: dir))
        // A source that would deliver its first reading only after an hour.
        async let wake = session.wake {
            try? await clock.sleep(for: .seconds(3_600))
            return nil
        }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(5))
        let result = await wake
        #expect(result.stop == .budget && result.readings == 0)
        #expect(budget.records.first?.endedAt == clock.now())
    }
}
