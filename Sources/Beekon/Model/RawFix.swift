import Foundation

/// A position as a location source reports it, before sanitising, quality
/// flags and the gate. Providers fill what their hardware reports and leave
/// the rest nil.
public struct RawFix: Sendable, Hashable {
    /// When the receiver computed the fix (not when it was read).
    public var timestamp: Date
    /// Degrees, WGS 84.
    public var latitude: Double
    /// Degrees, WGS 84.
    public var longitude: Double
    /// Horizontal accuracy in metres (about 68–95 % confidence, source-dependent).
    public var accuracy: Double?
    /// Speed over ground in metres per second.
    public var speed: Double?
    /// Course over ground in degrees, 0 = north.
    public var bearing: Double?
    /// Altitude in metres.
    public var altitude: Double?
    /// Whether the source says the fix is simulated.
    public var isMock: Bool
    /// An activity classification, when the source has one.
    public var activity: Activity?

    /// Creates a raw fix.
    public init(
        timestamp: Date, latitude: Double, longitude: Double, accuracy: Double? = nil,
        speed: Double? = nil, bearing: Double? = nil, altitude: Double? = nil,
        isMock: Bool = false, activity: Activity? = nil
    ) {
        self.timestamp = timestamp
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.speed = speed
        self.bearing = bearing
        self.altitude = altitude
        self.isMock = isMock
        self.activity = activity
    }
}
