import Foundation

/// What uploads may reveal (SPEC BY-4), applied to every fix as its batch is encoded, so
/// nothing more precise ever leaves the device. History, `positions` and local exports keep
/// the precise fixes: they stay on the user's own device.
public struct PrivacyConfig: Sendable, Hashable, Codable {
    /// Snap every uploaded position to the centre of a grid cell of this size in metres
    /// (nil: no blur). Stable: the same place always maps to the same point. The uploaded
    /// point is within `blurRadiusMeters` of the true one, carries no decimal digit finer than
    /// a tenth of the cell, and its accuracy is at least the radius. Allowed 10…100000.
    public var blurRadiusMeters: Double?
    /// Circles inside which positions are replaced by the zone centre or withheld.
    public var zones: [PrivacyZone]

    /// Creates a privacy configuration.
    public init(blurRadiusMeters: Double? = nil, zones: [PrivacyZone] = []) {
        self.blurRadiusMeters = blurRadiusMeters
        self.zones = zones
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case blurRadiusMeters, zones
    }

    /// Decodes a configuration; both fields are optional.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            blurRadiusMeters: try c.decodeIfPresent(Double.self, forKey: .blurRadiusMeters),
            zones: try c.decodeIfPresent([PrivacyZone].self, forKey: .zones) ?? [])
    }

    /// Throws `invalidConfiguration` naming the first bad field.
    public func validate() throws(BeekonError) {
        if let r = blurRadiusMeters, !(r.isFinite && (10...100_000).contains(r)) {
            throw .invalidConfiguration("sync.privacy.blurRadiusMeters must be within 10…100000 metres (got \(r))")
        }
        var seen = Set<String>()
        for zone in zones {
            try zone.validate()
            guard seen.insert(zone.id).inserted else {
                throw .invalidConfiguration("sync.privacy.zones: duplicate id \"\(zone.id)\"")
            }
        }
    }
}
