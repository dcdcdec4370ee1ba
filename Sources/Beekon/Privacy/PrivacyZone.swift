import BeekonPrimitives
import BeekonWire
import Foundation

/// A circle (home, work) inside which no upload carries the device's own position
/// (SPEC BY-4): each fix inside is replaced by the zone's centre with the zone's id, or
/// withheld altogether. Local history keeps the precise fix (it is the user's own device).
public struct PrivacyZone: Sendable, Hashable, Codable {
    /// What an upload shows for a fix inside the zone.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// The zone's centre and id; accuracy at least the radius; no speed, bearing or altitude.
        case replaceWithCentre
        /// Nothing: the fix is not uploaded (the batch still goes, refreshing last contact).
        case withhold
    }

    /// The application's name for the zone (1…100 code points); uploaded as `privacy_zone`.
    public var id: String
    /// Centre latitude, degrees WGS 84.
    public var latitude: Double
    /// Centre longitude, degrees WGS 84.
    public var longitude: Double
    /// Radius in metres (10…100000).
    public var radiusMeters: Double
    /// Replace with the centre (default) or withhold.
    public var action: Action

    /// Creates a privacy zone.
    public init(id: String, latitude: Double, longitude: Double, radiusMeters: Double, action: Action = .replaceWithCentre) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMeters = radiusMeters
        self.action = action
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case id, latitude, longitude, radiusMeters, action
    }

    /// Decodes a zone; `action` defaults to `replaceWithCentre`.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id), latitude: try c.decode(Double.self, forKey: .latitude),
            longitude: try c.decode(Double.self, forKey: .longitude),
            radiusMeters: try c.decode(Double.self, forKey: .radiusMeters),
            action: try c.decodeIfPresent(Action.self, forKey: .action) ?? .replaceWithCentre)
    }

    /// Whether a position lies inside the zone (the boundary included).
    func contains(latitude lat: Double, longitude lon: Double) -> Bool {
        Geodesy.distance(latitude, longitude, lat, lon) <= radiusMeters
    }

    /// Throws `invalidConfiguration` naming the first bad field.
    func validate() throws(BeekonError) {
        guard !id.isEmpty, WireLimits.length(id) <= WireLimits.identifier, WireLimits.textProblem(id) == nil else {
            throw .invalidConfiguration(
                "sync.privacy.zones: id must be 1…\(WireLimits.describe(WireLimits.identifier)) without U+0000 (got \"\(id)\")")
        }
        guard latitude.isFinite, (-90...90).contains(latitude), longitude.isFinite, (-180...180).contains(longitude) else {
            throw .invalidConfiguration("sync.privacy.zones[\(id)]: latitude/longitude out of range")
        }
        guard radiusMeters.isFinite, (10...100_000).contains(radiusMeters) else {
            throw .invalidConfiguration("sync.privacy.zones[\(id)]: radiusMeters must be within 10…100000 (got \(radiusMeters))")
        }
    }
}
