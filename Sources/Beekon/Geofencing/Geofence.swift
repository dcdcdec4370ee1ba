import BeekonWire
import Foundation

/// A circular region the SDK watches for enter and exit crossings (GF-1).
///
/// Add fences with `addGeofences`; re-adding an `id` replaces the fence with
/// that id. In a configuration file `notifyOnEntry` and `notifyOnExit` may be
/// omitted and default to `true`.
public struct Geofence: Sendable, Hashable, Codable, Identifiable {
    /// The longest accepted id, in Unicode code points (`WireLimits.identifier`; never grapheme clusters,
    /// which can carry any number of combining marks).
    public static let maxIDLength = 100

    /// The application's id for this fence: 1–100 code points, unique among fences.
    public var id: String
    /// Centre latitude in degrees, WGS 84, in −90…90.
    public var latitude: Double
    /// Centre longitude in degrees, WGS 84, in −180…180.
    public var longitude: Double
    /// Radius in metres; finite and greater than 0.
    public var radiusMeters: Double
    /// Whether entering the fence emits and records a `GeofenceEvent`.
    public var notifyOnEntry: Bool
    /// Whether leaving the fence emits and records a `GeofenceEvent`.
    public var notifyOnExit: Bool

    /// Creates a geofence; call `validate()` (or let `addGeofences` do it) before use.
    public init(
        id: String, latitude: Double, longitude: Double, radiusMeters: Double,
        notifyOnEntry: Bool = true, notifyOnExit: Bool = true
    ) {
        self.id = id
        self.latitude = latitude
        self.longitude = longitude
        self.radiusMeters = radiusMeters
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    /// The names of a fence's keys, in declaration order.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case id, latitude, longitude, radiusMeters, notifyOnEntry, notifyOnExit
    }

    /// Decodes a fence; missing `notifyOnEntry`/`notifyOnExit` default to `true`.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id),
            latitude: try c.decode(Double.self, forKey: .latitude),
            longitude: try c.decode(Double.self, forKey: .longitude),
            radiusMeters: try c.decode(Double.self, forKey: .radiusMeters),
            notifyOnEntry: try c.decodeIfPresent(Bool.self, forKey: .notifyOnEntry) ?? true,
            notifyOnExit: try c.decodeIfPresent(Bool.self, forKey: .notifyOnExit) ?? true)
    }

    /// Checks every field; throws `BeekonError.invalidConfiguration` whose message
    /// names the fence and the field, e.g. `geofence "x": radiusMeters must be > 0 (got 0.0)`.
    public func validate() throws(BeekonError) {
        if let problem { throw .invalidConfiguration("geofence \(displayID): \(problem)") }
    }

    /// What is wrong with this fence, or nil when it is valid.
    var problem: String? {
        let length = WireLimits.length(id)
        if length < 1 || length > Self.maxIDLength {
            return "id must be 1–\(Self.maxIDLength) characters (got \(length))"
        }
        if let problem = WireLimits.textProblem(id) { return "id \(problem)" }
        if !(latitude.isFinite && (-90...90).contains(latitude)) {
            return "latitude must be a finite number in -90…90 (got \(latitude))"
        }
        if !(longitude.isFinite && (-180...180).contains(longitude)) {
            return "longitude must be a finite number in -180…180 (got \(longitude))"
        }
        if !(radiusMeters.isFinite && radiusMeters > 0) {
            return "radiusMeters must be > 0 (got \(radiusMeters))"
        }
        return nil
    }

    /// The id quoted for messages, shortened when it is too long to read.
    var displayID: String {
        id.count > 40 ? "\"\(id.prefix(40))…\"" : "\"\(id)\""
    }

    /// Whether `other` has the same centre and radius (notify flags may differ).
    func hasSameRegion(as other: Geofence) -> Bool {
        latitude == other.latitude && longitude == other.longitude && radiusMeters == other.radiusMeters
    }
}
