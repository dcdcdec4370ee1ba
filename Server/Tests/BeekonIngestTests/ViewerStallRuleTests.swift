@testable import BeekonIngest
import Testing

/// The slow-viewer rule of the live stream (BY-7, BY-8) as a value: driven tick by tick, with
/// no server, no socket and no clock.
@Suite struct ViewerStallRuleTests {
    /// Nothing happens between ticks, whatever the channel's state.
    @Test func nothingHappensWithoutANewTick() {
        var rule = ViewerStallRule(beats: 7)
        #expect(rule.check(beats: 7, writable: true) == .none)
        #expect(rule.check(beats: 7, writable: false) == .none)
        #expect(rule.stalledBeats == 0)
    }

    /// A writable viewer gets one keep-alive comment per tick, never a close.
    @Test func aWritableViewerGetsAKeepAlivePerTick() {
        var rule = ViewerStallRule(beats: 0)
        for beat in 1...10 {
            #expect(rule.check(beats: beat, writable: true) == .keepAlive)
            #expect(rule.check(beats: beat, writable: true) == .none)
        }
    }

    /// Issue 32: a viewer sent events since the last tick gets no keep-alive at the next one (at
    /// 10,000 viewers a keep-alive to each was a write wave as large as an event's); one sent
    /// nothing during a tick's interval gets it at the tick after.
    @Test func aViewerSentEventsSinceTheLastTickGetsNoKeepAlive() {
        var rule = ViewerStallRule(beats: 0)
        rule.noteSent()
        #expect(rule.check(beats: 1, writable: true) == .none)
        #expect(rule.check(beats: 2, writable: true) == .keepAlive)
        rule.noteSent()
        rule.noteSent()
        #expect(rule.check(beats: 2, writable: true) == .none, "no new tick: nothing, and the note is kept")
        #expect(rule.check(beats: 3, writable: true) == .none)
        #expect(rule.check(beats: 4, writable: true) == .keepAlive)
    }

    /// Two ticks seen by one check (their wake-ups coalesced on a busy loop) get the keep-alive
    /// even after events: the events may have gone out before the earlier tick, and without it the
    /// stream could go three ticks without a byte.
    @Test func aCheckThatSawTwoTicksSendsTheKeepAliveEvenAfterEvents() {
        var rule = ViewerStallRule(beats: 0)
        rule.noteSent()
        #expect(rule.check(beats: 2, writable: true) == .keepAlive)
        rule.noteSent()
        #expect(rule.check(beats: 3, writable: true) == .none, "one tick after events: none")
    }

    /// Events written do not excuse a viewer that stays unwritable: the count and the close
    /// are the same as without them (a viewer whose buffer filled with events is the slow one).
    @Test func eventsSentDoNotExcuseAnUnwritableViewer() {
        var rule = ViewerStallRule(beats: 0)
        rule.noteSent()
        #expect(rule.check(beats: 1, writable: false) == .wait)
        rule.noteSent()
        #expect(rule.check(beats: 2, writable: false) == .close(beats: 2))
    }

    /// Unwritable at two consecutive ticks: closed at the second, counting from the subscription.
    @Test func twoConsecutiveUnwritableTicksClose() {
        var rule = ViewerStallRule(beats: 3)
        #expect(rule.check(beats: 4, writable: false) == .wait)
        #expect(rule.check(beats: 4, writable: false) == .none)
        #expect(rule.check(beats: 5, writable: false) == .close(beats: 2))
    }

    /// A tick found writable in between starts the count again: a slow reader that keeps up
    /// at every other tick is never closed.
    @Test func aWritableTickResetsTheCount() {
        var rule = ViewerStallRule(beats: 0)
        for beat in stride(from: 1, through: 40, by: 2) {
            #expect(rule.check(beats: beat, writable: false) == .wait)
            #expect(rule.check(beats: beat + 1, writable: true) == .keepAlive)
        }
        #expect(rule.stalledBeats == 0)
    }

    /// Ticks missed between checks (a busy event loop) count as one: the rule counts the
    /// checks that saw a new tick, so a viewer is never closed on a single observation.
    @Test func ticksMissedBetweenChecksCountOnce() {
        var rule = ViewerStallRule(beats: 0)
        #expect(rule.check(beats: 5, writable: false) == .wait)
        #expect(rule.check(beats: 9, writable: false) == .close(beats: 2))
    }

    /// Another limit is honoured; a limit below one is taken as one.
    @Test func theLimitIsConfigurable() {
        var three = ViewerStallRule(beats: 0, limit: 3)
        #expect(three.check(beats: 1, writable: false) == .wait)
        #expect(three.check(beats: 2, writable: false) == .wait)
        #expect(three.check(beats: 3, writable: false) == .close(beats: 3))
        var zero = ViewerStallRule(beats: 0, limit: 0)
        #expect(zero.limit == 1)
        #expect(zero.check(beats: 1, writable: false) == .close(beats: 1))
    }
}
