import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

/// The foreground/background profile from the app's lifecycle (BY-4): which notification
/// means which state, the background settle, and the host's opt-out.
@Suite("App lifecycle")
struct AppLifecycleTests {
    let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("BY-4: foreground events switch at once, a background entry after it settles, repeats switch nothing")
    func rule() {
        var rule = AppLifecycleRule()
        let actions: [AppLifecycleRule.Action] = [
            rule.receive(.launched(inBackground: true), at: t0, current: .foreground, follows: true),
            rule.receive(.launched(inBackground: false), at: t0, current: .foreground, follows: true),
            rule.receive(.willEnterForeground, at: t0, current: .background, follows: true),
            rule.receive(.didBecomeActive, at: t0, current: .foreground, follows: true),
            rule.receive(.didEnterBackground, at: t0, current: .foreground, follows: true),
        ]
        #expect(actions == [.apply(.background), .none, .apply(.foreground), .none, .settle(after: .seconds(1))])
        let settled: [AppState?] = [
            rule.settled(at: t0 + 0.5, current: .foreground, follows: true),
            rule.settled(at: t0 + 1, current: .foreground, follows: true),
            rule.settled(at: t0 + 2, current: .background, follows: true),  // once
        ]
        #expect(settled == [nil, .background, nil])
        let again = rule.receive(.didEnterBackground, at: t0, current: .background, follows: true)
        #expect(again == .none)
    }

    @Test("BY-4: back to the foreground within the settle time cancels the background switch")
    func debounce() {
        var rule = AppLifecycleRule()
        let actions: [AppLifecycleRule.Action] = [
            rule.receive(.didEnterBackground, at: t0, current: .foreground, follows: true),
            rule.receive(.willEnterForeground, at: t0 + 0.4, current: .foreground, follows: true),
        ]
        #expect(actions == [.settle(after: .seconds(1)), .none])
        let cancelled = rule.settled(at: t0 + 1, current: .foreground, follows: true)
        #expect(cancelled == nil)
        // A later entry settles from its own time, not the first one's.
        _ = rule.receive(.didEnterBackground, at: t0 + 5, current: .foreground, follows: true)
        let settled = [
            rule.settled(at: t0 + 5.5, current: .foreground, follows: true), rule.settled(at: t0 + 6, current: .foreground, follows: true),
        ]
        #expect(settled == [nil, .background])
    }

    @Test("BY-4: a host that opted out (followsAppLifecycle false) is never switched")
    func optOut() {
        var rule = AppLifecycleRule()
        var actions: [AppLifecycleRule.Action] = []
        for event in [AppLifecycleEvent.launched(inBackground: true), .didEnterBackground, .willEnterForeground, .didBecomeActive] {
            actions.append(rule.receive(event, at: t0, current: .foreground, follows: false))
            actions.append(rule.receive(event, at: t0, current: .background, follows: false))
        }
        #expect(actions == Array(repeating: .none, count: 8))
        _ = rule.receive(.didEnterBackground, at: t0, current: .foreground, follows: true)
        let settled = rule.settled(at: t0 + 1, current: .foreground, follows: false)
        #expect(settled == nil)  // opted out meanwhile
    }

    /// Lifecycle events sent by the test.
    final class ScriptedLifecycle: AppLifecycleSource {
        let stream: AsyncStream<AppLifecycleEvent>
        let sink: AsyncStream<AppLifecycleEvent>.Continuation
        init() { (stream, sink) = AsyncStream.makeStream(of: AppLifecycleEvent.self) }
        func events() async -> AsyncStream<AppLifecycleEvent> { stream }
    }

    /// Waits (yielding, no sleep) until the SDK's app state is `state`.
    static func waitFor(_ state: AppState, in beekon: Beekon) async {
        while await beekon.appState != state { await Task.yield() }
    }

    @Test("BY-4, LC-8: the SDK follows the lifecycle source: launched in the background, then foreground, then background after the settle")
    func theSDKFollowsTheSource() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let lifecycle = ScriptedLifecycle()
        var deps = BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock)
        deps.appLifecycle = lifecycle
        let beekon = Beekon(dependencies: deps)
        try await beekon.configure(BeekonConfig(backgroundProfile: .background))
        lifecycle.sink.yield(.launched(inBackground: true))
        await Self.waitFor(.background, in: beekon)
        lifecycle.sink.yield(.didBecomeActive)
        await Self.waitFor(.foreground, in: beekon)
        lifecycle.sink.yield(.didEnterBackground)
        await clock.waitForSleepers(1)
        #expect(await beekon.appState == .foreground)  // not before the settle time
        clock.advance(by: .seconds(1))
        await Self.waitFor(.background, in: beekon)
        let log = try await beekon.diagnosticLog()
        #expect(log.filter { $0.message == "profile switched" }.count == 3)
        await beekon.shutdown()
    }

    @Test("BY-4: with followsAppLifecycle off the SDK ignores lifecycle events; setAppState still works")
    func theSDKIgnoresTheEventsWhenOptedOut() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        try await beekon.configure(BeekonConfig(followsAppLifecycle: false))
        await beekon.receiveLifecycle(.launched(inBackground: true))
        await beekon.receiveLifecycle(.didEnterBackground)
        #expect(clock.sleeperCount == 0)  // no settle pending
        #expect(await beekon.appState == .foreground)
        try await beekon.setAppState(.background)  // the host's own call
        await beekon.receiveLifecycle(.willEnterForeground)
        await beekon.receiveLifecycle(.didBecomeActive)
        #expect(await beekon.appState == .background)
        // Opting back in takes effect from the next event.
        try await beekon.configure(BeekonConfig(followsAppLifecycle: true))
        await beekon.receiveLifecycle(.didBecomeActive)
        #expect(await beekon.appState == .foreground)
        await beekon.shutdown()
    }
}
