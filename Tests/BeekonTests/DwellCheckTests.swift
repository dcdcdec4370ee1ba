import BeekonPrimitives
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

@testable import Beekon

/// The gate's distance is the OS distance filter, so a still phone delivers nothing;
/// the SDK lifts the filter after the stationary dwell without a fix, finds the phone still
/// and pauses the source (else the continuous service would run, unheard, all day).
@Suite("Distance filter and the stationary dwell")
struct DwellCheckTests {
    /// A tuning-aware source: the scripted provider, recording every tuning the SDK sends.
    struct TuningRecorder: LocationProvider, SourceTuningObserver {
        let wrapped: ScriptedProvider
        let tunings = Locked([SourceTuning]())
        let changes = AsyncStream.makeStream(of: SourceTuning.self)

        func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> { try await wrapped.start(mode: mode) }
        func setPowerMode(_ mode: PowerMode) async { await wrapped.setPowerMode(mode) }
        func stop() async { await wrapped.stop() }
        func tuningChanged(_ tuning: SourceTuning) async {
            tunings.withLock { $0.append(tuning) }
            changes.continuation.yield(tuning)
        }
    }

    @Test("Saver's 150 m filter reaches the source; after the dwell without a fix it is lifted, and the still phone pauses")
    func theFilterIsLiftedAfterTheDwell() async throws {
        let h = Harness()
        let source = TuningRecorder(wrapped: h.provider)
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: h.dir.db, provider: source, clock: h.clock))
        try await beekon.configure(BeekonConfig(preset: .saver))
        try await beekon.start()
        #expect(source.tunings.value.last?.distanceFilterMeters == 150)
        await h.provider.send(fix(0))
        try #require(await beekon.source.dwellTimer != nil, "the fix armed the dwell check")
        await h.clock.waitForSleepers(1)  // that timer, asleep on the clock
        h.clock.advance(by: .seconds(120))
        let changes = source.changes.stream
        let lifted = try await Deadline.run(.seconds(10), "the filter lifted") {
            for await tuning in changes where tuning.distanceFilterMeters == nil { return true }
            return false
        }
        #expect(lifted)
        await h.provider.send(fix(125, north: 2))  // the next fix the OS delivers: 2 m away, after the dwell
        #expect(await h.provider.powerModes.last == .paused, "the detector found the phone still")
        let last = try #require(source.tunings.value.last)
        #expect(last.distanceFilterMeters == 150, "the filter is back after the fix")
        #expect(last.stationary?.latitude == fix(0).latitude, "the wake region's centre: the detector's anchor")
        #expect(await beekon.source.dwellTimer == nil, "no dwell check while paused")
        try await beekon.stop()
    }

    @Test("Without a tuning-aware source (gpsd, replay) nothing is armed")
    func otherSourcesAreUntouched() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(preset: .saver))
        try await beekon.start()
        await h.provider.send(fix(0))
        #expect(await beekon.source.dwellTimer == nil)
        #expect(h.clock.sleeperCount == 0)
        try await beekon.stop()
    }
}
