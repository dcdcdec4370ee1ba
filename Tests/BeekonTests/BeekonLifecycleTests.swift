import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

@Suite("Beekon lifecycle and streams (LC, FX-7)")
struct BeekonLifecycleTests {
    @Test func startIsTheTransitionToTrackingAndStateStreamIsReplayOne() async throws {
        let h = Harness()
        let beekon = h.beekon()
        var early = beekon.state.makeAsyncIterator()
        #expect(await early.next() == .idle)
        try await beekon.start()
        #expect(beekon.currentState == .tracking, "when start() returns, the state is tracking")
        #expect(await early.next() == .tracking)
        // A late subscriber gets the current value at once; a second one too.
        var late1 = beekon.state.makeAsyncIterator()
        var late2 = beekon.state.makeAsyncIterator()
        #expect(await late1.next() == .tracking)
        #expect(await late2.next() == .tracking)
        try await beekon.stop()
        #expect(await early.next() == .stopped(.user))
        #expect(await late1.next() == .stopped(.user))
        #expect(await h.provider.stopCount == 1)
    }

    @Test func positionsAreEmittedAfterTheyAreStored() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        var positions = beekon.positions.makeAsyncIterator()
        await h.provider.send(fix(1, north: 0))
        let emitted = try #require(await positions.next())
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(stored == [emitted])
        // Replay-1: a new subscriber gets the latest position.
        var late = beekon.positions.makeAsyncIterator()
        #expect(await late.next() == emitted)
        #expect(emitted.motion == .unknown && emitted.trigger == .interval && emitted.accuracy == 5)
    }

    @Test func gateAppliesAndConfigureTakesEffectWithoutRestartingTheSource() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()  // defaults: balanced 30 s / 100 m
        await h.provider.send([fix(0, north: 0), fix(10, north: 500), fix(40, north: 50), fix(60, north: 200)])
        var stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(stored.count == 2, "first fix, then only the fix meeting both 30 s and 100 m")
        try await beekon.configure(BeekonConfig(preset: .precision))
        await h.provider.send(fix(71, north: 231))
        stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(stored.count == 3)
        #expect(await h.provider.startCount == 1)
        #expect(await h.provider.powerModes == [.balanced, .high])
        let stats = await beekon.statistics
        #expect(stats.received == 5 && stats.stored == 3 && stats.tooSoon == 1 && stats.tooClose == 1)
    }

    @Test func invalidAndNotLaterFixesAreCountedNotStored() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        var nan = fix(1)
        nan.latitude = .nan
        await h.provider.send([fix(5, north: 0), nan, fix(5, north: 10), fix(4, north: 20), fix(6, north: 30)])
        let stats = await beekon.statistics
        #expect(stats.invalid == 1 && stats.notLater == 2 && stats.stored == 2)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).map(\.latitude).allSatisfy(\.isFinite))
    }

    @Test func startFailuresThrowClearErrorsAndSetTheStopReason() async throws {
        let h = Harness()
        let beekon = h.beekon()
        await h.provider.failNextStart(with: .permissionDenied)
        await #expect(throws: BeekonError.permissionDenied) { try await beekon.start() }
        #expect(beekon.currentState == .stopped(.permissionDenied))
        #expect(try await beekon.storeReport().trackingIntent == nil)
        await h.provider.failNextStart(with: .servicesDisabled("receiver unplugged"))
        await #expect(throws: BeekonError.locationServicesDisabled("receiver unplugged")) { try await beekon.start() }
        #expect(beekon.currentState == .stopped(.locationServicesDisabled))
        // LC-5: only a new start() re-enters tracking.
        try await beekon.start()
        #expect(beekon.currentState == .tracking)
    }

    @Test func sourceFailureWhileTrackingStopsWithReason() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()
        var states = beekon.state.makeAsyncIterator()
        #expect(await states.next() == .tracking)
        async let ended: Void = beekon.waitUntilSourceEnds()
        await h.provider.fail(LocationProviderError.servicesDisabled("gpsd unreachable"))
        await ended
        #expect(beekon.currentState == .stopped(.locationServicesDisabled), "waiters see the final state")
        #expect(await states.next() == .stopped(.locationServicesDisabled))
    }

    @Test func waitUntilSourceEndsReturnsAfterTheLastFixIsStored() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        async let ended: Void = beekon.waitUntilSourceEnds()
        await h.provider.send([fix(1), fix(2, north: 5)])
        await h.provider.finish()
        await ended
        #expect(beekon.currentState == .tracking, "the end of a source is not a stop")
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 2)
    }
}
