import Foundation

/// What CoreLocation ranges and monitors for one region (SPEC BY-5): a UUID with optional
/// major, and minor only with a major — the shape of `CLBeaconIdentityConstraint`.
public struct BeaconConstraint: Sendable, Hashable {
    /// The region's identifier (the OS region's identifier too).
    public var identifier: String
    /// The proximity UUID.
    public var uuid: UUID
    /// The major, if the region names one.
    public var major: UInt16?
    /// The minor, only with a major.
    public var minor: UInt16?

    /// The constraint for `region`: nil without a UUID (CoreLocation cannot range "any
    /// beacon"); a major or minor outside 0…65535 is dropped, and so is a minor without a
    /// major — the wider constraint is ranged and the tracker keeps to the region.
    public init?(_ region: BeaconRegion) {
        guard let text = region.uuid, let uuid = UUID(uuidString: text) else { return nil }
        identifier = region.identifier
        self.uuid = uuid
        major = region.major.flatMap { UInt16(exactly: $0) }
        minor = major == nil ? nil : region.minor.flatMap { UInt16(exactly: $0) }
    }

    /// The constraints of `regions`, in order, without regions CoreLocation cannot range.
    public static func of(_ regions: [BeaconRegion]) -> [BeaconConstraint] {
        regions.compactMap(BeaconConstraint.init)
    }
}

/// One beacon as CoreLocation ranged it (`CLBeacon`), platform-neutral (SPEC BY-5).
public struct RangedBeacon: Sendable, Hashable {
    /// The proximity UUID.
    public var uuid: UUID
    /// The major.
    public var major: Int
    /// The minor.
    public var minor: Int
    /// The received signal strength, dBm; 0 when the beacon was not heard in the last second.
    public var rssi: Int
    /// When CoreLocation last heard it.
    public var timestamp: Date

    /// Creates a ranged beacon.
    public init(uuid: UUID, major: Int, minor: Int, rssi: Int, timestamp: Date) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.rssi = rssi
        self.timestamp = timestamp
    }

    /// The reading for the proximity trigger, heard by `scanner`; CoreLocation does not
    /// report a beacon's calibrated power, so `measuredPower` (dBm at 1 m) is the
    /// deployment's. Nil when the beacon was not heard (RSSI 0) or the RSSI is implausible.
    public func reading(scanner: String, measuredPower: Int) -> BeaconReading? {
        guard rssi < 0, rssi > -127, let identity = BeaconIdentity(uuid: uuid.uuidString, major: major, minor: minor) else {
            return nil
        }
        return BeaconReading(scanner: scanner, identity: identity, measuredPower: measuredPower, rssi: rssi, time: timestamp)
    }
}
