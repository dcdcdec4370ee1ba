/// A set of beacons to range (SPEC BY-5): a UUID with optional major and minor, as in
/// CoreLocation's beacon regions; a region without a UUID matches every beacon.
public struct BeaconRegion: Sendable, Equatable, Codable {
    /// The region's name, carried on its events.
    public var identifier: String
    /// The UUID (normalised 8-4-4-4-12 upper case); nil matches any beacon.
    public var uuid: String?
    /// The major to match; nil matches any.
    public var major: Int?
    /// The minor to match; nil matches any.
    public var minor: Int?
    /// A rule for this region only; nil uses the tracker's.
    public var rule: ProximityRule?

    /// Creates a region; returns nil when `uuid` is given but not 32 hex digits.
    public init?(identifier: String, uuid: String?, major: Int? = nil, minor: Int? = nil, rule: ProximityRule? = nil) {
        if let uuid {
            guard let normal = BeaconIdentity.normalise(uuid) else { return nil }
            self.uuid = normal
        } else {
            self.uuid = nil
        }
        self.identifier = identifier
        self.major = major
        self.minor = minor
        self.rule = rule
    }

    /// The region that matches every beacon.
    public static let any = BeaconRegion(identifier: "*", uuid: nil)!

    /// Whether `identity` belongs to the region.
    public func matches(_ identity: BeaconIdentity) -> Bool {
        (uuid == nil || uuid == identity.uuid)
            && (major == nil || major == identity.major)
            && (minor == nil || minor == identity.minor)
    }
}
