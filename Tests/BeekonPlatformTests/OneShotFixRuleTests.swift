import Foundation
import Testing

@testable import Beekon

/// BY-2: what answers a one-shot request on Apple platforms (`requestLocation()`).
@Suite("One-shot fix rule")
struct OneShotFixRuleTests {
    let t = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aCachedPositionOlderThanTheLimitDoesNotAnswer() {
        let rule = OneShotFixRule(requestedAt: t)
        let cached = LocationSample(timestamp: t.addingTimeInterval(-60), latitude: 48, longitude: 11, horizontalAccuracy: 10)
        #expect(rule.answer(from: [cached]) == nil, "a minute-old cached fix is not a fresh answer")
        let fresh = LocationSample(timestamp: t.addingTimeInterval(2), latitude: 48.001, longitude: 11, horizontalAccuracy: 8)
        #expect(rule.answer(from: [cached, fresh])?.latitude == 48.001)
        let recent = LocationSample(timestamp: t.addingTimeInterval(-9), latitude: 48.002, longitude: 11, horizontalAccuracy: 8)
        #expect(rule.answer(from: [recent])?.latitude == 48.002, "within the 10 s allowance")
    }

    @Test func anInvalidSampleNeverAnswers() {
        let rule = OneShotFixRule(requestedAt: t)
        let invalid = LocationSample(timestamp: t.addingTimeInterval(1), latitude: 48, longitude: 11, horizontalAccuracy: -1)
        #expect(rule.answer(from: [invalid]) == nil)
    }
}
