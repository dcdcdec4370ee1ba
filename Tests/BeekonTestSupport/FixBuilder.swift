import Beekon
import BeekonTesting
import Foundation

/// A fix `seconds` after `base` (the test clock's start by default), `northMeters` north of
/// 48° N 11° E: the one fix builder of the SDK's unit and platform tests.
public func fix(_ seconds: Double, north northMeters: Double = 0, accuracy: Double? = 5, base: Date = TestClock().now()) -> RawFix {
    RawFix(
        timestamp: base.addingTimeInterval(seconds),
        latitude: 48.0 + northMeters / 111_195.0, longitude: 11.0, accuracy: accuracy)
}
