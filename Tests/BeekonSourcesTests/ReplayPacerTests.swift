import BeekonSources
import Foundation
import Testing

/// The replay schedule shared by track and beacon replays (SRC-4).
@Suite struct ReplayPacerTests {
    let t0 = Date(timeIntervalSince1970: 1_000)
    let r0 = Date(timeIntervalSince1970: 5_000)

    @Test("SRC-4: recorded gaps divided by the speed, gaps capped at maxGap and never negative, restart re-anchors")
    func schedule() {
        var pacer = ReplayPacer(speed: .multiplier(4), maxGap: .seconds(300))
        #expect(pacer.delay(before: t0, realNow: r0) == nil)  // anchors
        #expect(pacer.delay(before: t0 + 8, realNow: r0) == 2)
        #expect(pacer.delay(before: t0 + 4, realNow: r0 + 2) == 0)  // backwards: no gap
        #expect(pacer.delay(before: t0 + 3_600, realNow: r0 + 2) == 75)  // (8 + 300) / 4 − 2
        pacer.restart()
        #expect(pacer.delay(before: t0 + 3_604, realNow: r0 + 100) == nil)
        #expect(pacer.delay(before: t0 + 3_612, realNow: r0 + 100) == 2)
    }

    @Test("SRC-4: max speed never waits")
    func unpaced() {
        var pacer = ReplayPacer(speed: .asFastAsPossible)
        #expect(pacer.delay(before: t0, realNow: r0) == nil)
        #expect(pacer.delay(before: t0 + 60, realNow: r0) == nil)
    }
}
