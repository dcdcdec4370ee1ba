import BeekonPrimitives
import BeekonWire
import Foundation

/// FX-4 and FX-5: values are sanitised, never invented, and quality is derived
/// as a flag rather than a drop.
///
/// Thresholds (documented in the README):
/// - `low_accuracy` when the reported horizontal accuracy is worse than
///   ``lowAccuracyThresholdMeters`` (100 m: worse than that a fix cannot place
///   a device on a street).
/// - `implausible_speed` when the speed implied by the distance and time from
///   the last admitted fix exceeds ``implausibleSpeedThreshold`` (100 m/s =
///   360 km/h: faster than any ground vehicle the SDK targets).
///   `implausible_speed` wins when both apply.
enum FixSanitiser {
    static let lowAccuracyThresholdMeters = 100.0
    static let implausibleSpeedThreshold = 100.0

    /// Returns a cleaned copy, or nil when latitude/longitude are unusable (never stored).
    /// The timestamp is truncated to milliseconds, the wire's and the store's precision.
    static func sanitise(_ raw: RawFix) -> SanitisedFix? {
        guard raw.latitude.isFinite, raw.longitude.isFinite,
            (-90...90).contains(raw.latitude), (-180...180).contains(raw.longitude),
            raw.timestamp.timeIntervalSince1970.isFinite
        else { return nil }
        var fix = raw
        fix.timestamp = WireTimestamp(raw.timestamp).date
        fix.accuracy = raw.accuracy.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        fix.speed = raw.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        fix.bearing = raw.bearing.flatMap { $0.isFinite && $0 >= 0 && $0 < 360 ? $0 : nil }
        fix.altitude = raw.altitude.flatMap { $0.isFinite ? $0 : nil }
        return SanitisedFix(fix: fix)
    }

    /// The quality flag of `fix` given the last admitted fix (if any).
    static func quality(of fix: RawFix, after last: GatePoint?) -> Quality? {
        if let last {
            let dt = fix.timestamp.timeIntervalSince(last.timestamp)
            if dt > 0 {
                let implied = Geodesy.distance(last.latitude, last.longitude, fix.latitude, fix.longitude) / dt
                if implied > implausibleSpeedThreshold { return .implausibleSpeed }
            }
        }
        if let accuracy = fix.accuracy, accuracy > lowAccuracyThresholdMeters { return .lowAccuracy }
        return nil
    }
}

/// A fix that went through `FixSanitiser.sanitise` (once): the only kind the tracking
/// machine decides on. Its fields read as the `RawFix`'s.
@dynamicMemberLookup
struct SanitisedFix: Sendable, Equatable {
    /// The cleaned values.
    let fix: RawFix

    fileprivate init(fix: RawFix) {
        self.fix = fix
    }

    /// The same fix with `activity` set (a label, not a value the sanitiser cleans).
    func with(activity: Activity?) -> SanitisedFix {
        var fix = self.fix
        fix.activity = activity
        return SanitisedFix(fix: fix)
    }

    subscript<T>(dynamicMember keyPath: KeyPath<RawFix, T>) -> T {
        fix[keyPath: keyPath]
    }
}
