import BeekonWire
import Foundation

/// A beacon proximity transition handed to the SDK to store and upload (SPEC BY-5). The SDK
/// does no beacon parsing or ranging itself: `BeekonBeacons` (or the app's own ranging)
/// decides the transition and records it with ``Beekon/recordProximity(_:)``.
public struct ProximityRecord: Sendable, Hashable {
    /// Enter or exit.
    public enum Transition: String, Sendable, Hashable, CaseIterable {
        /// The beacon came within the region's enter distance (once per entry).
        case enter
        /// The beacon went beyond the exit distance or fell silent.
        case exit
    }

    /// Assigned by the SDK when the event is stored (UUIDv7); the upload's dedupe key.
    public internal(set) var id: UUID
    /// The app's beacon region identifier (1…100 code points).
    public var region: String
    /// The beacon's 16-byte identifier (iBeacon proximity UUID, Eddystone namespace+instance).
    public var beacon: UUID
    /// The beacon's major, when its frame has one (0…65535).
    public var major: Int?
    /// The beacon's minor, when its frame has one (0…65535).
    public var minor: Int?
    /// The scanner that heard the beacon (1…100 code points; the phone itself, or an adapter such as `hci0`).
    public var scanner: String
    /// Enter or exit.
    public var transition: Transition
    /// When the transition completed.
    public var timestamp: Date
    /// The smoothed distance in metres; nil for an exit by silence.
    public var distance: Double?

    /// Creates a record to store (its ``id`` is assigned when stored).
    public init(
        region: String, beacon: UUID, major: Int? = nil, minor: Int? = nil, scanner: String, transition: Transition,
        timestamp: Date, distance: Double? = nil
    ) {
        self.id = UUID(uuid: UUID_NULL_BYTES)
        self.region = region
        self.beacon = beacon
        self.major = major
        self.minor = minor
        self.scanner = scanner
        self.transition = transition
        self.timestamp = timestamp
        self.distance = distance
    }

    /// Why the record cannot travel in schema v1, or nil.
    var invalidReason: String? {
        let most = WireLimits.identifier
        if region.isEmpty || WireLimits.length(region) > most { return "region must be 1...\(WireLimits.describe(most))" }
        if scanner.isEmpty || WireLimits.length(scanner) > most { return "scanner must be 1...\(WireLimits.describe(most))" }
        if let problem = WireLimits.textProblem(region + scanner) { return "region and scanner \(problem)" }
        for (name, value) in [("major", major), ("minor", minor)] {
            if let v = value, !(0...65_535).contains(v) { return "\(name) must be within 0...65535" }
        }
        if let d = distance, !(d.isFinite && d >= 0) { return "distance must be a finite number >= 0" }
        return nil
    }

    var wire: WireProximityEvent {
        WireProximityEvent(
            id: id, region: region, uuid: beacon, major: major, minor: minor, scanner: scanner,
            type: transition == .enter ? .enter : .exit, timestamp: WireTimestamp(timestamp), distance: distance)
    }
}
