import Foundation

/// The fields of a `CLLocation` as CoreLocation reports them, before any judgement:
/// the glue copies them one property each, and ``rawFix`` decides what they mean.
///
/// CoreLocation's conventions (iOS 18 SDK): a negative `horizontalAccuracy` means the
/// coordinate is invalid; a negative `speed` or `course` means "not available"; a
/// negative `verticalAccuracy` means the altitude is not available;
/// `sourceInformation?.isSimulatedBySoftware` marks a simulated fix.
package struct LocationSample: Sendable, Hashable {
    /// `CLLocation.timestamp`: when the fix was computed (a relaunch's first fix may be old).
    package var timestamp: Date
    /// `coordinate.latitude`, degrees.
    package var latitude: Double
    /// `coordinate.longitude`, degrees.
    package var longitude: Double
    /// `horizontalAccuracy`, metres; negative = invalid coordinate.
    package var horizontalAccuracy: Double
    /// `altitude`, metres.
    package var altitude: Double
    /// `verticalAccuracy`, metres; negative = altitude not available.
    package var verticalAccuracy: Double
    /// `speed`, m/s; negative = not available.
    package var speed: Double
    /// `course`, degrees; negative = not available.
    package var course: Double
    /// `sourceInformation?.isSimulatedBySoftware` (nil before iOS 15 / without source information).
    package var isSimulatedBySoftware: Bool?

    /// Creates a sample from CoreLocation's raw values.
    package init(
        timestamp: Date, latitude: Double, longitude: Double, horizontalAccuracy: Double,
        altitude: Double = 0, verticalAccuracy: Double = -1, speed: Double = -1, course: Double = -1,
        isSimulatedBySoftware: Bool? = nil
    ) {
        self.timestamp = timestamp
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.altitude = altitude
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.course = course
        self.isSimulatedBySoftware = isSimulatedBySoftware
    }

    /// The fix the SDK receives, or nil when CoreLocation marked the coordinate invalid
    /// (negative or non-finite horizontal accuracy). Negative speed, course or vertical
    /// accuracy become absent values, never 0; a simulated fix is `isMock`. The fix keeps
    /// its own timestamp: a cached fix delivered at relaunch is judged by when it was
    /// computed (the gate drops it when it is not later than the last stored fix).
    package var rawFix: RawFix? {
        guard horizontalAccuracy.isFinite, horizontalAccuracy >= 0 else { return nil }
        return RawFix(
            timestamp: timestamp, latitude: latitude, longitude: longitude,
            accuracy: horizontalAccuracy,
            speed: speed.isFinite && speed >= 0 ? speed : nil,
            bearing: course.isFinite && course >= 0 ? course : nil,
            altitude: verticalAccuracy.isFinite && verticalAccuracy >= 0 && altitude.isFinite ? altitude : nil,
            isMock: isSimulatedBySoftware ?? false)
    }
}
