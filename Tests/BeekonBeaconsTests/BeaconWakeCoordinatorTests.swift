import Beekon
import BeekonPrimitives
import BeekonTesting
import Foundation
import Testing

@testable import BeekonBeacons

/// CoreLocation's part scripted: ranging delivers `readings` from the clock's time at
/// `startRanging`, moving the test clock to each; every call is logged with the lease's state.
final class ScriptedRanging: BeaconRangingControl, @unchecked Sendable {
    struct Entry: Equatable {
        var call: String
        var at: Date
        var leaseOpen: Bool
    }

    private let readings: [BeaconReading]
    private let clock: TestClock
    private let budget: FixedBudget
    private let lock = NSLock()
    private var index = 0
    private var ranging = false
    private(set) var log: [Entry] = []
    /// Called once, before the next reading is delivered (a platform event arriving mid-wake).
    var duringWake: (@Sendable () async -> Void)?

    init(_ readings: [BeaconReading], clock: TestClock, budget: FixedBudget) {
        self.readings = readings
        self.clock = clock
        self.budget = budget
    }

    private func note(_ call: String) {
        let open = budget.records.last.map { $0.endedAt == nil } ?? false
        lock.withLock { log.append(Entry(call: call, at: clock.now(), leaseOpen: open)) }
    }

    func startRanging() async {
        note("start")
        let now = clock.now()
        lock.withLock {
            ranging = true
            index = readings.firstIndex { $0.time >= now } ?? readings.count
        }
    }

    func stopRanging() async {
        note("stop")
        lock.withLock { ranging = false }
    }

    func nextReading() async -> BeaconReading? {
        let hook: (@Sendable () async -> Void)? = lock.withLock {
            defer { duringWake = nil }
            return duringWake
        }
        await hook?()
        let reading: BeaconReading? = lock.withLock {
            guard ranging, index < readings.count else { return nil }
            defer { index += 1 }
            return readings[index]
        }
        if let reading { clock.set(reading.time) }
        return reading
    }
}

/// Region events and entering the background become ranging wakes under 10 s and 180 s
/// budgets (SPEC BY-5): ranging runs only inside the lease, stops before it ends, the lease
/// ends a safety margin before expiry, events are recorded while it runs, and the decision
/// state carries over to the next wake.
@Suite struct BeaconWakeCoordinatorTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let id = BeaconIdentity(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 1)!

    /// Near (−50 dBm at a −59 dBm beacon) every 0.5 s for `seconds`.
    static func near(seconds: Int) -> [BeaconReading] {
        (0..<(seconds * 2)).map {
            BeaconReading(scanner: "corelocation", identity: id, measuredPower: -59, rssi: -50, time: t0.addingTimeInterval(Double($0) / 2))
        }
    }

    static func tracker(dwell: Double) -> ProximityTracker {
        ProximityTracker(
            regions: [], rule: ProximityRule(enterDistance: 1, exitDistance: 2, dwell: dwell, silenceTimeout: 30),
            smoother: RSSISmoother(window: 30, trimFraction: 0.2, minimumSamples: 5))
    }

    static func store() throws -> (FileRangingStateStore, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-wakes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (FileRangingStateStore(url: dir.appendingPathComponent("state.json")), dir)
    }

    /// Events recorded, each with whether the lease was still open.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var events: [(ProximityEvent, leaseOpen: Bool)] = []
        func add(_ batch: [ProximityEvent], leaseOpen: Bool) { lock.withLock { events += batch.map { ($0, leaseOpen) } } }
    }

    @Test(
        "BY-5: a region event begins one wake; ranging runs inside the lease and both stop a margin before expiry",
        arguments: [10.0, 180.0])
    func oneWake(_ budgetSeconds: Double) async throws {
        let clock = TestClock(start: Self.t0)
        let budget = FixedBudget(seconds: budgetSeconds, clock: clock)
        let ranging = ScriptedRanging(Self.near(seconds: 400), clock: clock, budget: budget)
        let recorder = Recorder()
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(at: dir) }
        let coordinator = BeaconWakeCoordinator(
            tracker: Self.tracker(dwell: 2), budget: budget, clock: clock, store: store, control: ranging,
            record: { [budget] events in recorder.add(events, leaseOpen: budget.records.last?.endedAt == nil) })
        let ignored = Locked<RangingWakeSnapshot?>(nil)
        ranging.duringWake = { [coordinator] in
            let second = await coordinator.receive(.enteredBackground)
            ignored.value = RangingWakeSnapshot(began: second != nil, waking: await coordinator.waking)
        }
        #expect(await coordinator.receive(.didDetermineState("pump", inside: false)) == nil)
        #expect(budget.records.isEmpty, "no lease without a wake")
        let wake = try #require(await coordinator.receive(.didEnterRegion("pump")))
        #expect(ignored.value == RangingWakeSnapshot(began: false, waking: true), "an event during a wake begins no second one")
        #expect(wake.stop == .budget)
        let lease = try #require(budget.records.first)
        let ended = try #require(lease.endedAt)
        #expect(budget.records.count == 1)
        #expect(ranging.log.map(\.call) == ["start", "stop"])
        #expect(ranging.log.allSatisfy { $0.leaseOpen }, "ranging starts after the lease begins and stops before it ends")
        // The 5 s margin: stopped at the first reading past expiry − 5 s (readings every 0.5 s).
        #expect(ranging.log[1].at >= lease.expiry.addingTimeInterval(-5) && ranging.log[1].at <= lease.expiry.addingTimeInterval(-4.5))
        #expect(ended == ranging.log[1].at && ended < lease.expiry)
        #expect(recorder.events.map(\.0.type) == [.enter])
        #expect(recorder.events.allSatisfy { $0.leaseOpen }, "events are handed over while the lease runs")
        #expect(store.load()?.entries.values.contains { $0.trigger.inside } == true)
    }

    @Test("BY-5: a dwell begun in one 10 s wake completes in the next, even in a new process (state persisted)")
    func decisionCarriesOver() async throws {
        let clock = TestClock(start: Self.t0)
        let budget = FixedBudget(seconds: 10, clock: clock)
        let ranging = ScriptedRanging(Self.near(seconds: 40), clock: clock, budget: budget)
        let recorder = Recorder()
        let (store, dir) = try Self.store()
        defer { try? FileManager.default.removeItem(at: dir) }
        func coordinator() -> BeaconWakeCoordinator {
            BeaconWakeCoordinator(
                tracker: Self.tracker(dwell: 4), budget: budget, clock: clock, store: store, control: ranging,
                record: { events in recorder.add(events, leaseOpen: true) })
        }
        let first = try #require(await coordinator().receive(.didEnterRegion("pump")))

        #expect(first.events.isEmpty && first.stop == .budget, "5 s of ranging: known at 2 s, dwell pending")
        // The pending dwell (nothing inside yet) was persisted: JSON has no infinity, so no silence deadline is nil.
        #expect(store.load()?.entries.isEmpty == false)
        clock.set(Self.t0.addingTimeInterval(6))
        // The app was suspended and relaunched: a new coordinator, the same store.
        let second = try #require(await coordinator().receive(.didDetermineState("pump", inside: true)))
        #expect(second.events.map(\.type) == [.enter])
        #expect(second.events.first?.timestamp == Self.t0.addingTimeInterval(6))
        #expect(recorder.events.count == 1)
        #expect(budget.records.allSatisfy { ($0.endedAt ?? .distantFuture) < $0.expiry })
    }
}

/// What the mid-wake event saw.
struct RangingWakeSnapshot: Equatable, Sendable {
    var began: Bool
    var waking: Bool
}

@Suite struct RangingWakePlanTests {
    @Test("BY-5: region entry and exit, inside state and entering the background begin a wake; one at a time")
    func plan() {
        var plan = RangingWakePlan()
        var began: [Bool] = []
        for event in [
            RangingWakePlan.Event.didDetermineState("a", inside: false), .didDetermineState("a", inside: nil),
            .didDetermineState("a", inside: true), .didEnterRegion("a"),
        ] {
            began.append(plan.begins(on: event))
        }
        #expect(began == [false, false, true, false])
        #expect(plan.waking)
        plan.wakeEnded()
        let background = plan.begins(on: .enteredBackground)
        plan.wakeEnded()
        let entry = plan.begins(on: .didEnterRegion("a"))
        #expect(background && entry)
    }

    @Test("A beacon region exit begins a ranging wake (fresh background time on any region transition)")
    func anExitBeginsAWake() {
        var plan = RangingWakePlan()
        let exit = plan.begins(on: .didExitRegion("pump"))
        let during = plan.begins(on: .didExitRegion("desk"))
        plan.wakeEnded()
        let after = plan.begins(on: .didExitRegion("desk"))
        #expect(exit, "the exit is ranged: the beacons' exits get their distances")
        #expect(!during, "one wake at a time")
        #expect(after)
    }

    @Test("BY-5: regions become CoreLocation constraints: UUID required, minor only with a major, values in 0…65535")
    func constraints() throws {
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let regions = [
            BeaconRegion(identifier: "all", uuid: uuid)!, BeaconRegion(identifier: "pump", uuid: uuid, major: 4, minor: 2)!,
            BeaconRegion(identifier: "minorOnly", uuid: uuid, minor: 2)!, BeaconRegion(identifier: "big", uuid: uuid, major: 70_000)!,
            BeaconRegion.any,
        ]
        let c = BeaconConstraint.of(regions)
        #expect(c.map(\.identifier) == ["all", "pump", "minorOnly", "big"])
        #expect(c[1].major == 4 && c[1].minor == 2)
        #expect(c[2].major == nil && c[2].minor == nil)
        #expect(c[3].major == nil)
        #expect(c.allSatisfy { $0.uuid == UUID(uuidString: uuid) })
    }

    @Test("BY-5: a ranged beacon becomes a reading; RSSI 0 (not heard in the last second) is dropped")
    func rangedBeacon() throws {
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        let uuid = try #require(UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"))
        let heard = RangedBeacon(uuid: uuid, major: 1, minor: 2, rssi: -67, timestamp: t)
        let reading = try #require(heard.reading(scanner: "corelocation", measuredPower: -59))
        #expect(reading.identity.minor == 2 && reading.rssi == -67 && reading.measuredPower == -59 && reading.time == t)
        #expect(RangedBeacon(uuid: uuid, major: 1, minor: 2, rssi: 0, timestamp: t).reading(scanner: "c", measuredPower: -59) == nil)
    }
}

@Suite struct BeaconReadingBufferTests {
    static let reading = BeaconReading(
        scanner: "s", identity: BeaconWakeCoordinatorTests.id, measuredPower: -59, rssi: -60, time: Date(timeIntervalSince1970: 1))

    @Test("BY-5: readings wait for the wake; a waiting consumer is woken; reset drops leftovers")
    func buffer() async {
        let buffer = BeaconReadingBuffer()
        buffer.push([Self.reading, Self.reading])
        #expect(await buffer.next() == Self.reading)
        buffer.reset()
        #expect(buffer.count == 0)
        async let waiting = buffer.next()
        while buffer.count == 0 {
            buffer.push([Self.reading])
            await Task.yield()
        }
        #expect(await waiting == Self.reading)
    }

    @Test("BY-5: a cancelled wait returns nil and the next reading still arrives")
    func cancellation() async {
        let buffer = BeaconReadingBuffer()
        let task = Task { await buffer.next() }
        task.cancel()
        #expect(await task.value == nil)
        buffer.push([Self.reading])
        #expect(await buffer.next() == Self.reading)
    }
}
