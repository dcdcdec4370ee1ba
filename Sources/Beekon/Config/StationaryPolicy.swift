/// What the SDK does once the device has stayed inside the stationary radius
/// for the dwell time (FX-6, config field `whenStationary`).
public enum StationaryPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Keep the source in its normal power mode; fixes are marked `stationary`.
    case keepTracking
    /// Put the source in its lowest-power mode until a fix leaves the radius (the default).
    case pause
    /// Like `pause`, and record a `check_in` fix from the cached last position at
    /// every `checkInIntervalSeconds`, without asking the hardware for a new fix.
    case pauseWithCheckIns
}
