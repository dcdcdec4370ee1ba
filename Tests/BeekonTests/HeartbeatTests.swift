import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// The heartbeat that survives suspension (BY-4, BY-8, FX-6): the envelope
/// declares the check-in interval, the background refresh records the check-in a suspended
/// app's timer could not, and in the foreground `heartbeatSeconds` asks for a fresh fix.
@Suite("Heartbeats: declared, recorded while suspended, asked for in the foreground")
struct HeartbeatTests {
    /// A suspended process: its time moves on, but no timer it armed ever fires.
    struct SuspendedClock: BeekonClock {
        let base: TestClock
        func now() -> Date { base.now() }
        func sleep(for duration: Duration) async throws { try await base.sleep(for: .seconds(100_000_000)) }
    }

    @Test("BY-8: the envelope declares check_in_interval_seconds under pauseWithCheckIns, nothing under pause")
    func theEnvelopeDeclaresTheCheckInInterval() async throws {
        for (policy, declared) in [(StationaryPolicy.pauseWithCheckIns, 900), (.pause, nil)] as [(StationaryPolicy, Int?)] {
            let h = Harness()
            let transport = ScriptedTransport()
            let beekon = h.beekon(transport: transport)
            var config = syncConfig(SyncConfig(url: loopbackURL, intervalSeconds: 300))
            config.whenStationary = policy  // checkInIntervalSeconds stays at its default, 900 s
            try await configureSync(beekon, config)
            try await beekon.start()
            await h.provider.send(fix(0))
            try await beekon.sync()
            let device = try #require(await transport.requests.last?.envelope.device)
            #expect(device.checkInIntervalSeconds == declared, "\(policy)")
            #expect(device.syncIntervalSeconds == 300)
        }
    }

    @Test("BY-4, FX-6: a suspended app's refresh task records the check-in its timer could not")
    func theBackgroundRefreshRecordsTheDueCheckIn() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let provider = ScriptedProvider()
        let beekon = Beekon(
            dependencies: BeekonDependencies(databasePath: dir.db, provider: provider, clock: SuspendedClock(base: clock)))
        var config = BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0)
        config.whenStationary = .pauseWithCheckIns
        config.checkInIntervalSeconds = 600
        try await beekon.configure(config)
        try await beekon.start()
        await provider.send((0...13).map { fix(Double($0) * 10) })  // stationary once the 120 s dwell is done
        #expect(await beekon.performBackgroundRefresh() == false, "nothing due yet")
        clock.advance(by: .seconds(730))  // the check-in fell due at 720 s; no timer fires in a suspended app
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).allSatisfy { $0.trigger != .checkIn })
        #expect(await beekon.performBackgroundRefresh() == true)
        let checkIns = try await beekon.history(from: .distantPast, to: .distantFuture).filter { $0.trigger == .checkIn }
        #expect(checkIns.map(\.timestamp) == [clock.now()], "from the cached position, stamped when the refresh ran")
        #expect(checkIns.first?.latitude == fix(130).latitude)
        #expect(await beekon.performBackgroundRefresh() == false, "one check-in per interval")
    }

    @Test("BackgroundRefreshPlan: the wake sources of a suspended, stationary device")
    func theSuspendedWakeSources() {
        let plan = BackgroundRefreshPlan(syncIntervalSeconds: 300, checkInIntervalSeconds: 1_800)
        #expect(
            plan.wakeSources(paused: true, stationaryRadiusMeters: 5) == [
                .significantChanges, .regionAroundStationaryPosition(radiusMeters: 100), .backgroundRefresh(earliestSeconds: 900),
            ], "the refresh no more often than iOS honours (900 s), the shorter interval otherwise")
        #expect(
            plan.wakeSources(paused: false, stationaryRadiusMeters: 5) == [.significantChanges, .backgroundRefresh(earliestSeconds: 900)])
        let checkInsOnly = BackgroundRefreshPlan(syncIntervalSeconds: nil, checkInIntervalSeconds: 1_800)
        #expect(checkInsOnly.nextRequest(now: Date(timeIntervalSince1970: 0)) == Date(timeIntervalSince1970: 1_800))
        #expect(BackgroundRefreshPlan(syncIntervalSeconds: nil).wakeSources(paused: true, stationaryRadiusMeters: 5).count == 2)
    }

    @Test("BY-4: in the foreground, heartbeatSeconds asks the source for one fresh fix when none came in time")
    func theForegroundHeartbeatAsksForAFix() async throws {
        let h = Harness()
        let beekon = h.beekon()
        // A gate that would reject anything for an hour: only the heartbeat can store the second fix.
        try await beekon.configure(
            BeekonConfig(
                minTimeBetweenLocationsSeconds: 3_600, minDistanceBetweenLocationsMeters: 0, whenStationary: .keepTracking,
                heartbeatSeconds: 30))
        try await beekon.start()
        await h.provider.send(fix(0))
        await h.provider.setOneShotFix(fix(31, north: 1))
        var positions = beekon.positions.makeAsyncIterator()
        _ = await positions.next()  // the first fix (replayed)
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(30))
        let asked = await positions.next()
        #expect(asked?.timestamp == fix(31).timestamp, "the fix the timer asked for, admitted by the heartbeat")
        try await beekon.setAppState(.background)
        #expect(await beekon.source.heartbeatTimer == nil, "no heartbeat timer in the background")
        try await beekon.stop()
    }

    @Test("BY-4: a stored fix moves the heartbeat's deadline; one timer task, not a new one per fix")
    func aStoredFixMovesTheDeadlineOfOneTimer() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(
            BeekonConfig(
                minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0, whenStationary: .keepTracking,
                heartbeatSeconds: 30))
        try await beekon.start()
        await h.provider.send(fix(0))
        await h.clock.waitForSleepers(1)
        let timer = try #require(await beekon.source.heartbeatTimer)
        h.clock.advance(by: .seconds(20))
        await h.provider.send(fix(20, north: 50))
        #expect(await beekon.source.heartbeatTimer == timer, "the stored fix moved the deadline of the running timer")
        await h.provider.setOneShotFix(fix(60, north: 100))
        h.clock.advance(by: .seconds(29))  // 49 s: past the first fix's deadline, 29 s after the second fix
        await h.clock.waitForSleepers(1)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 2, "not due before 30 s without a fix")
        h.clock.advance(by: .seconds(1))
        await h.clock.waitForSleepers(1)  // the re-armed timer of the stored heartbeat fix
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(stored.map(\.timestamp) == [fix(0), fix(20), fix(60)].map(\.timestamp), "30 s after the last stored fix")
        try await beekon.stop()
    }
}
