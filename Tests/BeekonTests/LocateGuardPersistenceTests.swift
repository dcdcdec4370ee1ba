import BeekonPrimitives
import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// BY-2: the locate guard survives the process. A second `Beekon` on the
/// same database is the app relaunched in the background by a silent push, with no call
/// from the host before the push is answered.
@Suite("Locate guard across relaunches")
struct LocateGuardPersistenceTests {
    /// A battery reading set by the test.
    final class Battery: PowerStateSource {
        let state = Locked(PowerState.unknown)
        func current() async -> PowerState { state.value }
    }

    func relaunched(_ h: Harness, battery: Battery? = nil) -> Beekon {
        var deps = BeekonDependencies(databasePath: h.dir.db, provider: h.provider, clock: h.clock)
        deps.powerState = battery
        return Beekon(dependencies: deps)
    }

    @Test("BY-2: a locate pushed to an app whose user turned sharing off is refused after a relaunch")
    func sharingOffSurvivesARelaunch() async throws {
        let h = Harness()
        await h.beekon().setLocatePolicy(LocatePolicy(sharingEnabled: false))
        await h.provider.setOneShotFix(fix(0))
        let push = WireLocatePush(locateRequestID: UUID())
        let app = relaunched(h)
        #expect(await app.handleRemoteNotification(push) == .noData)
        #expect(await app.handleLocateRequest(id: UUID()) == .refused(reason: "sharing_off"))
        #expect(try await app.history(from: .distantPast, to: .distantFuture).isEmpty, "no fix stored")
        // Turned on again, in a third process: answered.
        await app.setLocatePolicy(LocatePolicy(sharingEnabled: true))
        guard case .answered = await relaunched(h).handleLocateRequest(id: UUID()) else {
            Issue.record("sharing on again is answered after a relaunch")
            return
        }
    }

    @Test("BY-2: the interval since the last answer survives a relaunch")
    func theBudgetSurvivesARelaunch() async throws {
        let h = Harness()
        await h.provider.setOneShotFix(fix(0))
        let first = h.beekon()
        await first.setLocatePolicy(LocatePolicy(minIntervalSeconds: 120))
        guard case .answered = await first.handleLocateRequest(id: UUID()) else {
            Issue.record("the first request is answered")
            return
        }
        h.clock.advance(by: .seconds(60))
        #expect(await relaunched(h).handleLocateRequest(id: UUID()) == .refused(reason: "too_soon"))
        h.clock.advance(by: .seconds(61))
        guard case .answered = await relaunched(h).handleLocateRequest(id: UUID()) else {
            Issue.record("answered once the interval has passed, in yet another process")
            return
        }
    }

    @Test("BY-2: a low battery or Low Power Mode stretches the interval, across relaunches; charging lifts it")
    func theBatteryGuardReadsTheBattery() async throws {
        let h = Harness()
        let battery = Battery()
        await h.provider.setOneShotFix(fix(0))
        let first = relaunched(h, battery: battery)
        await first.setLocatePolicy(LocatePolicy(minIntervalSeconds: 30, lowBatteryLevel: 0.2, lowBatteryMinIntervalSeconds: 600))
        guard case .answered = await first.handleLocateRequest(id: UUID()) else {
            Issue.record("the first request is answered")
            return
        }
        h.clock.advance(by: .seconds(31))
        battery.state.value = PowerState(batteryLevel: 0.15)
        let second = relaunched(h, battery: battery)
        #expect(await second.handleLocateRequest(id: UUID()) == .refused(reason: "low_battery"))
        battery.state.value = PowerState(batteryLevel: 0.9, lowPowerMode: true)
        #expect(await second.handleLocateRequest(id: UUID()) == .refused(reason: "low_battery"))
        battery.state.value = PowerState(batteryLevel: 0.15, charging: true)
        guard case .answered = await second.handleLocateRequest(id: UUID()) else {
            Issue.record("a charging phone is not low")
            return
        }
        h.clock.advance(by: .seconds(599))
        battery.state.value = PowerState(batteryLevel: 0.1)
        #expect(await relaunched(h, battery: battery).handleLocateRequest(id: UUID()) == .refused(reason: "low_battery"))
        h.clock.advance(by: .seconds(1))
        guard case .answered = await relaunched(h, battery: battery).handleLocateRequest(id: UUID()) else {
            Issue.record("answered once the low-battery interval has passed")
            return
        }
    }

    @Test("BY-2: the guard rule: sharing, then the interval, then the low-battery interval")
    func theRule() {
        var g = LocateGuard()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        g.lastAnswered = t0
        g.policy = LocatePolicy(minIntervalSeconds: 30, lowBatteryLevel: 0.25, lowBatteryMinIntervalSeconds: 300)
        let low = PowerState(batteryLevel: 0.25)
        #expect(g.refusal(now: t0.addingTimeInterval(10), power: low) == "too_soon")
        #expect(g.refusal(now: t0.addingTimeInterval(100), power: low) == "low_battery")
        #expect(g.refusal(now: t0.addingTimeInterval(100), power: PowerState(batteryLevel: 0.26)) == nil)
        #expect(g.refusal(now: t0.addingTimeInterval(100), power: .unknown) == nil, "an unknown battery is not low")
        #expect(g.refusal(now: t0.addingTimeInterval(300), power: low) == nil)
        #expect(PowerState(batteryLevel: -1).batteryLevel == nil, "UIKit's -1 is unknown")
    }

    @Test("BY-2: the policy's new keys decode and are validated")
    func theKeysDecode() throws {
        let json = #"{"sharing":false,"lowBatteryLevel":0.3,"lowBatteryMinIntervalSeconds":900}"#
        let policy = try JSONDecoder().decode(LocatePolicy.self, from: Data(json.utf8))
        #expect(policy == LocatePolicy(sharingEnabled: false, lowBatteryLevel: 0.3, lowBatteryMinIntervalSeconds: 900))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(LocatePolicy.self, from: Data(#"{"lowBatteryLevel":2}"#.utf8)) }
        let encoded = try JSONEncoder().encode(policy)
        #expect(try JSONDecoder().decode(LocatePolicy.self, from: encoded) == policy)
    }
}
