import Foundation

/// The seam that fills a fix's `activity` (SPEC FX-1, BY-4). The SDK calls it for every
/// sanitised fix, in order, when `BeekonConfig.classifyActivity` is on; a fix whose source
/// already set an activity (CoreMotion on Apple platforms) keeps it. Return `.unknown`
/// when unsure, never a guess.
public protocol ActivityClassifier: Sendable {
    /// The activity at this fix, given every earlier fix.
    mutating func classify(_ fix: RawFix) -> Activity
}
