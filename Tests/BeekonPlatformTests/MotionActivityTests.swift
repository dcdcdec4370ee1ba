import Beekon
import BeekonPrimitives
import BeekonTesting
import Foundation
import Testing

/// CoreMotion's activity behind the `ActivityClassifier` seam (BY-4, FX-1): the mapping, the
/// confidence threshold, the choice of source and the staleness rule, platform-neutral.
@Suite("Motion activity")
struct MotionActivityTests {
    static let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    static func motion(
        _ flags: [WritableKeyPath<MotionActivity, Bool>], _ confidence: MotionActivity.Confidence = .high,
        start: Double = 0, received: Double = 0
    ) -> MotionActivity {
        var m = MotionActivity(confidence: confidence, startDate: t0 + start, receivedAt: t0 + received)
        for flag in flags { m[keyPath: flag] = true }
        return m
    }

    @Test("BY-4: each CoreMotion flag maps to the SDK's activity; a vehicle stopped at a light stays automotive")
    func mapping() {
        let cases: [([WritableKeyPath<MotionActivity, Bool>], Activity)] = [
            ([\.stationary], .stationary), ([\.walking], .walking), ([\.running], .running), ([\.cycling], .cycling),
            ([\.automotive], .automotive), ([\.automotive, \.stationary], .automotive), ([\.unknown], .unknown),
            ([\.walking, \.unknown], .unknown), ([], .unknown), ([\.running, \.walking], .running),
        ]
        for (flags, expected) in cases {
            #expect(Self.motion(flags).activity(minimumConfidence: .medium) == expected, "\(flags)")
        }
    }

    @Test("BY-4: an estimate below the confidence threshold is unknown, not a guess")
    func confidence() {
        #expect(Self.motion([\.walking], .low).activity(minimumConfidence: .medium) == .unknown)
        #expect(Self.motion([\.walking], .medium).activity(minimumConfidence: .medium) == .walking)
        #expect(Self.motion([\.walking], .medium).activity(minimumConfidence: .high) == .unknown)
        #expect(Self.motion([\.walking], .low).activity(minimumConfidence: .low) == .walking)
    }

    @Test("BY-4: CoreMotion where available and not refused, else the fix-stream classifier")
    func sourceChoice() {
        #expect(MotionActivityPolicy.source(motionAvailable: true, authorization: .authorized) == .motion)
        #expect(MotionActivityPolicy.source(motionAvailable: true, authorization: .notDetermined) == .motion)
        #expect(MotionActivityPolicy.source(motionAvailable: true, authorization: .denied) == .fixStream)
        #expect(MotionActivityPolicy.source(motionAvailable: true, authorization: .restricted) == .fixStream)
        #expect(MotionActivityPolicy.source(motionAvailable: false, authorization: .authorized) == .fixStream)
    }

    @Test("BY-4: a stale estimate, or one that began after the fix, gives way to the fallback")
    func staleness() {
        let policy = MotionActivityPolicy(minimumConfidence: .medium, maximumAge: 600, startTolerance: 2)
        let walking = Self.motion([\.walking], start: -30, received: 0)
        #expect(policy.activity(fixTime: Self.t0 + 600, motion: walking, fallback: .cycling) == .walking)
        #expect(policy.activity(fixTime: Self.t0 + 601, motion: walking, fallback: .cycling) == .cycling)
        #expect(policy.activity(fixTime: Self.t0 - 33, motion: walking, fallback: .cycling) == .cycling)  // began 3 s after the fix
        #expect(policy.activity(fixTime: Self.t0 - 32, motion: walking, fallback: .cycling) == .walking)  // 2 s: tolerated
        #expect(policy.activity(fixTime: Self.t0, motion: nil, fallback: .stationary) == .stationary)
        // A fresh but unsure estimate is unknown, not the fallback's guess.
        let unsure = Self.motion([\.automotive], .low)
        #expect(policy.activity(fixTime: Self.t0 + 1, motion: unsure, fallback: .walking) == .unknown)
    }

    /// A fallback that answers what it is told and counts the fixes it saw.
    struct CountingClassifier: ActivityClassifier {
        var answer: Activity
        var seen = 0
        mutating func classify(_ fix: RawFix) -> Activity {
            seen += 1
            return answer
        }
    }

    static func fixAt(_ seconds: Double) -> RawFix {
        RawFix(timestamp: t0 + seconds, latitude: 48, longitude: 11, accuracy: 5)
    }

    @Test("BY-4: the classifier starts the updates at its first fix, uses a fresh estimate, and keeps the fallback warm")
    func classifierUsesTheFeed() {
        let clock = TestClock(start: Self.t0)
        let starts = Locked(0)
        let feed = MotionActivityFeed(clock: clock) { _ in
            starts.withLock { $0 += 1 }
            return .motion
        }
        #expect(feed.source == nil && starts.value == 0)  // nothing asked of the platform before the first fix
        var classifier = MotionActivityClassifier(feed: feed, fallback: CountingClassifier(answer: .walking))
        let beforeAnyEstimate = classifier.classify(Self.fixAt(0))
        #expect(beforeAnyEstimate == .walking)  // no estimate yet: the fallback
        #expect(feed.source == .motion && starts.value == 1)
        feed.record(Self.motion([\.automotive], start: -5))
        let fresh = classifier.classify(Self.fixAt(1))
        #expect(fresh == .automotive)
        clock.advance(by: .seconds(700))
        let stale = classifier.classify(Self.fixAt(701))
        #expect(stale == .walking)  // 700 s since CoreMotion spoke: stale
        #expect((classifier.fallback as? CountingClassifier)?.seen == 3 && starts.value == 1)
    }

    @Test("BY-4: where the source is the fix stream, estimates are never used")
    func fixStreamSource() {
        let feed = MotionActivityFeed(clock: TestClock(start: Self.t0)) { _ in .fixStream }
        feed.record(Self.motion([\.automotive]))
        var classifier = MotionActivityClassifier(feed: feed, fallback: CountingClassifier(answer: .stationary))
        let result = classifier.classify(Self.fixAt(0))
        #expect(result == .stationary)
        #expect(feed.source == .fixStream)
    }
}
