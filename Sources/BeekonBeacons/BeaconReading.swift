import Foundation

/// One reception of a beacon by one scanner: the unit that distance smoothing and
/// proximity triggers consume (SPEC BY-5).
public struct BeaconReading: Sendable, Equatable {
    /// The scanner (receiver) that heard the beacon; one recording may hold several.
    public var scanner: String
    /// The beacon's identity.
    public var identity: BeaconIdentity
    /// The beacon's expected RSSI at 1 m, in dBm.
    public var measuredPower: Int
    /// The received signal strength, in dBm.
    public var rssi: Int
    /// When it was received.
    public var time: Date

    /// Creates a reading.
    public init(scanner: String, identity: BeaconIdentity, measuredPower: Int, rssi: Int, time: Date) {
        self.scanner = scanner
        self.identity = identity
        self.measuredPower = measuredPower
        self.rssi = rssi
        self.time = time
    }

    /// The reading of an advertising report whose data holds an identifiable beacon with a
    /// power, heard with a known RSSI; nil otherwise (a URL/TLM/EID frame, no RSSI, not a beacon).
    public static func from(report: AdvertisingReport, scanner: String, time: Date) throws(BeaconParseError) -> BeaconReading? {
        guard let frame = try BeaconFrame.parse(advertisingData: report.data),
            let identity = frame.identity, let power = frame.measuredPowerAt1m, let rssi = report.rssi
        else { return nil }
        return BeaconReading(scanner: scanner, identity: identity, measuredPower: power, rssi: rssi, time: time)
    }
}

/// What a recording reader produced: the readings in file order, and every problem
/// counted by kind with the first few as one-line messages (bad bytes never stop a read).
public struct BeaconReadResult: Sendable {
    /// The readings decoded.
    public var readings: [BeaconReading] = []
    /// Well-formed records that held no usable beacon reading (other HCI traffic, URL frames, …).
    public var skipped = 0
    /// Problems by ``BeaconParseError/kind``.
    public var errorCounts: [String: Int] = [:]
    /// The first ``maxMessages`` problems, each one line with its location.
    public var messages: [String] = []
    /// How many messages are kept.
    public static let maxMessages = 10

    /// Creates an empty result.
    public init() {}

    /// The total number of problems.
    public var errorCount: Int { errorCounts.values.reduce(0, +) }

    /// Counts `error`, found at `location` (e.g. `record 12`).
    public mutating func record(_ error: BeaconParseError, at location: String) {
        errorCounts[error.kind, default: 0] += 1
        if messages.count < Self.maxMessages { messages.append("\(location): \(error)") }
    }

    /// A one-line summary: `N readings, M skipped, K errors (kind: n, …)`.
    public var summary: String {
        let kinds = errorCounts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        return "\(readings.count) readings, \(skipped) skipped, \(errorCount) errors" + (kinds.isEmpty ? "" : " (\(kinds))")
    }
}
