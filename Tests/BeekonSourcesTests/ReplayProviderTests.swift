import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("ReplayProvider")
struct ReplayProviderTests {
    let real = ManualRealClock()

    @Test("max speed: file order (backwards and repeated times kept), clock advanced before each fix, normal end")
    func orderAndClock() async throws {
        let fixes = [diagonalFix(0, 0), diagonalFix(10, 1), diagonalFix(5, 2), diagonalFix(5, 3), diagonalFix(20, 4)]
        let clock = ReplayClock(realClock: real)
        let provider = ReplayProvider(fixes: fixes, speed: .asFastAsPossible, clock: clock)
        var seen: [RawFix] = []
        var nows: [Date] = []
        for try await f in try await provider.start(mode: .balanced) {
            seen.append(f)
            nows.append(clock.now())
        }
        #expect(seen == fixes)
        #expect(nows == [fixes[0], fixes[1], fixes[1], fixes[1], fixes[4]].map(\.timestamp))
        #expect(await provider.deliveredCount == 5)
        #expect(await provider.isRunning == false)
        #expect(await provider.lastRequestedMode == .balanced)
    }

    @Test("a 300 s sleep during a max-speed replay wakes when the delivered fix times pass it")
    func sleepDuringReplay() async throws {
        let fixes = (0..<100).map { diagonalFix(Double($0) * 10, $0) }
        let clock = ReplayClock(realClock: real)
        let provider = ReplayProvider(fixes: fixes, clock: clock)
        var it = try await provider.start(mode: .balanced).makeAsyncIterator()
        _ = try await it.next()
        let sleeper = Task { try await clock.sleep(for: .seconds(300)) }
        await eventually("sleeper registered") { clock.sleeperCount == 1 }
        while let f = try await it.next(), f.timestamp < fixes[0].timestamp + 300 {}
        // Neither the real clock nor the replay moves any more: only the jump can have woken it.
        try await sleeper.value
        #expect(await provider.deliveredCount == 31)
    }

    @Test("back-pressure: nothing is produced ahead of the consumer")
    func backPressure() async throws {
        let fixes = (0..<10_000).map { diagonalFix(Double($0), $0 % 100) }
        let provider = ReplayProvider(fixes: fixes, clock: ReplayClock(realClock: real))
        var it = try await provider.start(mode: .high).makeAsyncIterator()
        for _ in 0..<3 { _ = try await it.next() }
        await settle()
        #expect(await provider.deliveredCount == 3)
        #expect(await provider.remainingCount == 9_997)
    }

    @Test("stop ends the stream, even during a pacing wait; start continues with the next fix")
    func stopAndRestart() async throws {
        let fixes = [diagonalFix(0, 0), diagonalFix(3600, 1), diagonalFix(3700, 2)]
        let clock = ReplayClock(realClock: real)
        let provider = ReplayProvider(fixes: fixes, speed: .realTime, clock: clock)
        let stream = try await provider.start(mode: .balanced)
        let consumer = Task {
            var got: [RawFix] = []
            for try await f in stream { got.append(f) }
            return got
        }
        await eventually("first fix delivered and pacing wait begun") {
            await provider.deliveredCount == 1 && real.sleeperCount == 1
        }
        await provider.stop()
        #expect(try await consumer.value == [fixes[0]])
        #expect(real.sleeperCount == 0)

        var rest: [RawFix] = []
        let provider2 = provider
        for try await f in try await provider2.start(mode: .low) {
            rest.append(f)
            if rest.count == 1 { await provider.setPowerMode(.paused) }
            real.advance(by: 1000)
        }
        #expect(rest == [fixes[1], fixes[2]])
        #expect(await provider.lastRequestedMode == .paused)
    }

    @Test("multiplier pacing follows fix times on the real clock; gaps are capped at maxGap")
    func pacing() async throws {
        let fixes = [diagonalFix(0, 0), diagonalFix(10, 1), diagonalFix(7200, 2)]
        let clock = ReplayClock(realClock: real)
        let provider = ReplayProvider(fixes: fixes, speed: .multiplier(10), clock: clock, maxGap: .seconds(60))
        let stream = try await provider.start(mode: .balanced)
        let consumer = Task {
            var n = 0
            for try await _ in stream { n += 1 }
            return n
        }
        await eventually("first fix") { await provider.deliveredCount == 1 && real.sleeperCount == 1 }
        real.advance(by: 0.9)
        await settle()
        #expect(await provider.deliveredCount == 1)
        real.advance(by: 0.1)  // 10 s of track at 10× = 1 real second
        await eventually("second fix") { await provider.deliveredCount == 2 && real.sleeperCount == 1 }
        #expect(clock.now() == fixes[1].timestamp)
        real.advance(by: 5.9)  // the 7190 s gap is capped to 60 s → 6 real seconds
        await settle()
        #expect(await provider.deliveredCount == 2)
        real.advance(by: 0.1)
        #expect(try await consumer.value == 3)
        #expect(clock.now() == fixes[2].timestamp)  // the clock still carries the full gap
    }

    @Test("rebase shifts the track to start at the real time, keeping the gaps")
    func rebase() async throws {
        let fixes = [diagonalFix(0, 0), diagonalFix(30, 1), diagonalFix(95, 2)]
        let clock = ReplayClock(realClock: real)
        let provider = ReplayProvider(fixes: fixes, clock: clock, rebaseToNow: true)
        var got: [RawFix] = []
        for try await f in try await provider.start(mode: .balanced) { got.append(f) }
        let start = real.now()
        #expect(got.map(\.timestamp) == [start, start + 30, start + 95])
        #expect(got.map(\.latitude) == fixes.map(\.latitude))
        #expect(clock.now() == start + 95)
    }

    @Test("an empty track ends at once; a second start finishes the first stream")
    func emptyAndRestart() async throws {
        let empty = ReplayProvider(fixes: [], clock: ReplayClock(realClock: real))
        var n = 0
        for try await _ in try await empty.start(mode: .balanced) { n += 1 }
        #expect(n == 0)

        let provider = ReplayProvider(fixes: [diagonalFix(0), diagonalFix(1), diagonalFix(2)], clock: ReplayClock(realClock: real))
        var first = try await provider.start(mode: .balanced).makeAsyncIterator()
        #expect(try await first.next() == diagonalFix(0))
        var second = try await provider.start(mode: .balanced).makeAsyncIterator()
        #expect(try await first.next() == nil)
        #expect(try await second.next() == diagonalFix(1))
    }

    @Test("a cancelled consumer ends its stream without losing the undelivered fix")
    func consumerCancelled() async throws {
        let provider = ReplayProvider(
            fixes: [diagonalFix(0), diagonalFix(100), diagonalFix(200)], speed: .realTime, clock: ReplayClock(realClock: real))
        let stream = try await provider.start(mode: .balanced)
        let consumer = Task {
            var n = 0
            for try await _ in stream { n += 1 }
            return n
        }
        await eventually("waiting for the second fix") { await provider.deliveredCount == 1 && real.sleeperCount == 1 }
        consumer.cancel()
        #expect(try await consumer.value == 1)
        #expect(await provider.remainingCount == 2)
    }

    @Test("a real file at 1000× over the system clock arrives complete and in order")
    func realFileFast() async throws {
        let all = try read("gpx/togeojson_apple_watch_walk_1hz.gpx").fixes
        let fixes = Array(all.prefix(120))  // about 2 minutes of track → ~0.12 s
        let provider = ReplayProvider(fixes: fixes, speed: .multiplier(1000))
        var got: [RawFix] = []
        for try await f in try await provider.start(mode: .high) { got.append(f) }
        #expect(got == fixes)
    }

    @Test("created from a file; speed arguments parse")
    func fromFileAndSpeed() async throws {
        let provider = try ReplayProvider(contentsOf: SharedData.url("nmea/gpsd_humminbird-M37_powerboat.log"))
        #expect(provider.fixes.count == 17)
        #expect(provider.diagnostics?.format == .nmea)
        var n = 0
        for try await _ in try await provider.start(mode: .balanced) { n += 1 }
        #expect(n == 17)
        #expect(ReplaySpeed(argument: "max") == .asFastAsPossible)
        #expect(ReplaySpeed(argument: "1") == .realTime)
        #expect(ReplaySpeed(argument: "10x") == .multiplier(10))
        #expect(ReplaySpeed(argument: "0") == nil)
        #expect(ReplaySpeed(argument: "-3") == nil)
        #expect(ReplaySpeed(argument: "nan") == nil)
        #expect(ReplaySpeed.multiplier(.infinity).rate == nil)
    }
}
