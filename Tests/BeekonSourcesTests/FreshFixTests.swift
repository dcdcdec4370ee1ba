import BeekonTestSupport
import Foundation
import Testing
import Beekon
@testable import BeekonSources
import BeekonTesting

/// BY-2 with the providers the SDK ships: `getCurrentLocation` (the fresh fix a locate
/// request needs) works with every public Linux provider, not only through the agent.
@Suite("Fresh fix for locate requests (BY-2)")
struct FreshFixTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)
    static let track = (0..<5).map { i in
        RawFix(timestamp: t0 + Double(i), latitude: 48 + Double(i) * 0.001, longitude: 11, accuracy: 5)
    }

    /// A replay that is not running is started for one fix (and stopped again after).
    @Test func anIdleReplayAnswersWithItsNextFix() async throws {
        let provider = ReplayProvider(fixes: Self.track)
        let fix = try await provider.currentLocation(timeout: .seconds(30), mode: .high)
        #expect(fix == Self.track[0])
        #expect(await provider.deliveredCount == 1, "one fix taken from the track, the rest left for tracking")
    }

    /// The SDK answers a locate request with a plain `ReplayProvider` (no agent wrapper):
    /// the fresh fix is stored with trigger `manual` and the request id.
    @Test func theSDKAnswersALocateRequestWithAReplayProvider() async throws {
        let temp = TempDir()
        let dir = temp.url
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.appendingPathComponent("fresh.sqlite").path, provider: ReplayProvider(fixes: Self.track),
                clock: TestClock()))
        let request = UUID()
        guard case .answered(let location) = await beekon.handleLocateRequest(id: request) else {
            Issue.record("a replay provider must answer a locate request")
            return
        }
        #expect(location.trigger == .manual && location.locateRequestId == request)
        #expect(location.latitude == Self.track[0].latitude && location.timestamp == Self.track[0].timestamp)
        let stored = try await beekon.history(from: Self.t0 - 1, to: Self.t0 + 10)
        #expect(stored.map(\.id) == [location.id])
    }

    /// While a source runs, a request takes the next fix it delivers — never one delivered before.
    @Test func aRunningSourceAnswersWithItsNextFixNotACachedOne() async throws {
        let clock = TestClock()
        let fresh = FreshFixes(clock: clock)
        let (upstream, feed) = AsyncThrowingStream.makeStream(of: RawFix.self)
        let tapped = fresh.tap(upstream)
        let consumer = Task {
            var seen: [RawFix] = []
            for try await fix in tapped { seen.append(fix) }
            return seen
        }
        feed.yield(Self.track[0])  // before the request: not the answer
        let answer = Task {
            try await fresh.next(
                timeout: .seconds(30), start: { throw CancellationError() }, stop: {})
        }
        await clock.waitForSleepers(1)  // the request is waiting (its timeout sleeps)
        feed.yield(Self.track[1])
        #expect(try await answer.value == Self.track[1])
        feed.finish()
        #expect(try await consumer.value == Array(Self.track[0...1]), "the tracking stream is unchanged")
    }

    /// No fix within the timeout (on the provider's clock): nil, and an ended run wakes a waiter at once.
    @Test func aRequestTimesOutOrEndsWithTheRun() async throws {
        let clock = TestClock()
        let fresh = FreshFixes(clock: clock)
        fresh.started()
        let timedOut = Task { try await fresh.next(timeout: .seconds(5), start: { throw CancellationError() }, stop: {}) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        #expect(try await timedOut.value == nil)
        let ended = Task { try await fresh.next(timeout: .seconds(600), start: { throw CancellationError() }, stop: {}) }
        await clock.waitForSleepers(1)
        fresh.ended()
        #expect(try await ended.value == nil)
    }

    /// An idle source whose run delivers nothing in time: nil.
    @Test func anIdleSourceWithoutAFixTimesOut() async throws {
        let clock = TestClock()
        let fresh = FreshFixes(clock: clock)
        let (silent, feed) = AsyncThrowingStream.makeStream(of: RawFix.self)
        let request = Task { try await fresh.next(timeout: .seconds(5), start: { silent }, stop: { feed.finish() }) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        #expect(try await request.value == nil)
    }
}
