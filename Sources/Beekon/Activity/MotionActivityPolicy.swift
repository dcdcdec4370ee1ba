import Foundation

/// The decisions around CoreMotion's activity (BY-4), platform-neutral: which source fills
/// the `activity` field, how sure an estimate must be, and whether the last estimate still
/// describes a fix.
public struct MotionActivityPolicy: Sendable, Hashable {
    /// Where the activity comes from.
    public enum Source: Sendable, Hashable {
        /// The device's motion coprocessor (CoreMotion).
        case motion
        /// The platform-neutral classifier over the fix stream (`SpeedActivityClassifier`).
        case fixStream
    }

    /// Motion-and-fitness permission as CoreMotion reports it (`CMAuthorizationStatus`).
    public enum Authorization: Sendable, Hashable {
        /// Not asked yet: the first activity update asks.
        case notDetermined
        /// Forbidden by a profile or parental control.
        case restricted
        /// Refused by the user.
        case denied
        /// Allowed.
        case authorized
    }

    /// Estimates below this confidence read as `unknown` (default `.medium`: a `.low`
    /// estimate is a guess).
    public var minimumConfidence: MotionActivity.Confidence
    /// The longest time, seconds, between receiving an estimate and a fix it describes
    /// (default 600). CoreMotion reports changes only and nothing while the app is suspended,
    /// so an estimate older than this is not trusted and the fix-stream classifier answers.
    public var maximumAge: TimeInterval
    /// How far, seconds, an estimate may begin after a fix's time and still describe it
    /// (default 2): a fix delivered late must not take an activity that began after it.
    public var startTolerance: TimeInterval

    /// Creates a policy (defaults: `.medium`, 600 s, 2 s).
    public init(minimumConfidence: MotionActivity.Confidence = .medium, maximumAge: TimeInterval = 600, startTolerance: TimeInterval = 2) {
        self.minimumConfidence = minimumConfidence
        self.maximumAge = maximumAge
        self.startTolerance = startTolerance
    }

    /// The motion coprocessor where the device has one and the user has not refused it
    /// (`CMMotionActivityManager.isActivityAvailable()`, `authorizationStatus()`); else the
    /// fix-stream classifier.
    public static func source(motionAvailable: Bool, authorization: Authorization) -> Source {
        guard motionAvailable else { return .fixStream }
        switch authorization {
        case .notDetermined, .authorized: return .motion
        case .restricted, .denied: return .fixStream
        }
    }

    /// Whether `motion` describes a fix taken at `fixTime`: received no more than
    /// ``maximumAge`` before it, and begun no more than ``startTolerance`` after it.
    public func describes(_ motion: MotionActivity, fixTime: Date) -> Bool {
        fixTime.timeIntervalSince(motion.receivedAt) <= maximumAge
            && motion.startDate.timeIntervalSince(fixTime) <= startTolerance
    }

    /// The activity of a fix at `fixTime`: the last motion estimate's when it describes the
    /// fix (`unknown` when it is unsure), else `fallback` (the fix-stream classifier's answer).
    ///
    /// When the two disagree, a fresh, confident CoreMotion estimate wins: it reads the
    /// accelerometer (pedalling cadence, engine vibration), which the fix stream cannot; the
    /// fix stream answers only where CoreMotion is stale, missing or refused.
    public func activity(fixTime: Date, motion: MotionActivity?, fallback: Activity) -> Activity {
        guard let motion, describes(motion, fixTime: fixTime) else { return fallback }
        return motion.activity(minimumConfidence: minimumConfidence)
    }
}
