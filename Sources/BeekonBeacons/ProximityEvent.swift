import Foundation

/// A proximity transition of one beacon, as one scanner heard it, in one region (SPEC BY-5).
public struct ProximityEvent: Sendable, Equatable, Codable {
    /// The region's identifier.
    public var region: String
    /// The beacon.
    public var identity: BeaconIdentity
    /// The scanner that heard it.
    public var scanner: String
    /// `enter` or `exit`.
    public var type: ProximityTransition
    /// When the transition completed (for a silence exit: the last reception plus the timeout).
    public var timestamp: Date
    /// The smoothed distance in metres at the transition; nil for a silence exit.
    public var distance: Double?

    /// Creates an event.
    public init(region: String, identity: BeaconIdentity, scanner: String, type: ProximityTransition, timestamp: Date, distance: Double?) {
        self.region = region
        self.identity = identity
        self.scanner = scanner
        self.type = type
        self.timestamp = timestamp
        self.distance = distance
    }
}
