import Foundation

/// The `ActivityClassifier` of Apple devices with a motion coprocessor (BY-4): CoreMotion's
/// last estimate when it describes the fix (``MotionActivityPolicy``), else the fix-stream
/// classifier, which sees every fix either way so it is warm when it has to answer.
public struct MotionActivityClassifier: ActivityClassifier {
    /// Where the estimates arrive.
    public let feed: MotionActivityFeed
    /// Confidence and staleness rules.
    public var policy: MotionActivityPolicy
    /// What answers when CoreMotion's estimate does not describe the fix.
    public var fallback: any ActivityClassifier

    /// Creates the classifier.
    public init(
        feed: MotionActivityFeed, policy: MotionActivityPolicy = MotionActivityPolicy(),
        fallback: any ActivityClassifier = SpeedActivityClassifier()
    ) {
        self.feed = feed
        self.policy = policy
        self.fallback = fallback
    }

    /// CoreMotion's activity for this fix, or the fallback's.
    public mutating func classify(_ fix: RawFix) -> Activity {
        let fromStream = fallback.classify(fix)
        return policy.activity(fixTime: fix.timestamp, motion: feed.latest(), fallback: fromStream)
    }
}
