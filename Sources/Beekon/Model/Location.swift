import BeekonWire
import Foundation

/// An admitted, stored fix (FX-1): what `positions` emits and `history` returns.
public struct Location: Sendable, Hashable, Identifiable {
    /// Fix id (UUIDv7).
    public var id: UUID
    /// The tracking run (session) this fix belongs to.
    public var sessionId: UUID
    /// When the fix was recorded, at millisecond precision.
    public var timestamp: Date
    /// Degrees, WGS 84.
    public var latitude: Double
    /// Degrees, WGS 84.
    public var longitude: Double
    /// Horizontal accuracy in metres, if reported.
    public var accuracy: Double?
    /// Speed in metres per second, if reported.
    public var speed: Double?
    /// Course in degrees [0, 360), if reported.
    public var bearing: Double?
    /// Altitude in metres, if reported.
    public var altitude: Double?
    /// Why the fix was recorded.
    public var trigger: Trigger
    /// Motion state at the time of the fix.
    public var motion: Motion
    /// Whether the source flagged the fix as simulated.
    public var isMock: Bool
    /// Activity classification, if any.
    public var activity: Activity?
    /// Quality flag; nil means the fix is good (FX-5).
    public var quality: Quality?

    /// Creates a location.
    public init(
        id: UUID, sessionId: UUID, timestamp: Date, latitude: Double, longitude: Double,
        accuracy: Double? = nil, speed: Double? = nil, bearing: Double? = nil, altitude: Double? = nil,
        trigger: Trigger = .interval, motion: Motion = .unknown, isMock: Bool = false,
        activity: Activity? = nil, quality: Quality? = nil
    ) {
        self.id = id
        self.sessionId = sessionId
        self.timestamp = timestamp
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.speed = speed
        self.bearing = bearing
        self.altitude = altitude
        self.trigger = trigger
        self.motion = motion
        self.isMock = isMock
        self.activity = activity
        self.quality = quality
    }

    /// The locate request this fix answers (`Beekon.handleLocateRequest(id:)`); nil otherwise.
    public var locateRequestId: UUID? = nil

    /// The schema-v1 form of this fix.
    package var wire: WireLocation {
        var w = WireLocation(
            id: id, timestamp: WireTimestamp(timestamp), trigger: trigger, motion: motion, isMock: isMock,
            latitude: latitude, longitude: longitude, accuracy: accuracy, speed: speed, bearing: bearing,
            altitude: altitude, activity: activity, quality: quality)
        w.locateRequestId = locateRequestId
        return w
    }

    /// The fix a schema-v1 location describes, in `sessionId` (the envelope's); the inverse
    /// of ``wire`` (a coarsening `privacyZone` is not kept).
    package init(wire w: WireLocation, sessionId: UUID) {
        self.init(
            id: w.id, sessionId: sessionId, timestamp: w.timestamp.date, latitude: w.latitude, longitude: w.longitude,
            accuracy: w.accuracy, speed: w.speed, bearing: w.bearing, altitude: w.altitude, trigger: w.trigger,
            motion: w.motion, isMock: w.isMock, activity: w.activity, quality: w.quality)
        locateRequestId = w.locateRequestId
    }
}
