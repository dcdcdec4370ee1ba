/// Why a fix was recorded (schema v1 `trigger`).
public enum Trigger: String, Codable, Sendable, CaseIterable {
    /// A regular fix admitted by the gate.
    case interval
    /// The first fix after leaving the stationary radius.
    case motion
    /// A heartbeat built from the cached last position while stationary.
    case checkIn = "check_in"
    /// The fix that crossed a geofence.
    case geofence
    /// A fix requested on demand.
    case manual
}

/// The motion state at the time of the fix (schema v1 `motion`).
public enum Motion: String, Codable, Sendable, CaseIterable {
    /// The device is moving.
    case moving
    /// The device stayed inside the stationary radius for the dwell time.
    case stationary
    /// Not yet known (e.g. the first fix of a session).
    case unknown
}

/// An activity classification (schema v1 `activity`).
public enum Activity: String, Codable, Sendable, CaseIterable {
    /// Not moving.
    case stationary
    /// On foot, walking pace.
    case walking
    /// On foot, running pace.
    case running
    /// On a bicycle.
    case cycling
    /// In a vehicle.
    case automotive
    /// Classified but unknown.
    case unknown
}

/// A quality flag (schema v1 `quality`); absence means the fix is good.
public enum Quality: String, Codable, Sendable, CaseIterable {
    /// The reported horizontal accuracy is worse than the SDK's threshold.
    case lowAccuracy = "low_accuracy"
    /// The speed implied by the previous admitted fix is not physically plausible.
    case implausibleSpeed = "implausible_speed"
}

/// The direction of a geofence crossing (schema v1 `geofence_events[].type`).
public enum GeofenceTransition: String, Codable, Sendable, CaseIterable {
    /// The device entered the fence.
    case enter
    /// The device left the fence.
    case exit
}
