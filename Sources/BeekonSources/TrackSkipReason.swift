/// Why a reader skipped a record (a point, sentence, row or line) instead of producing a fix.
public enum TrackSkipReason: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The record has no timestamp (the SDK's gate works on fix time, so it cannot be used).
    case missingTime = "missing_time"
    /// The timestamp is present but cannot be parsed.
    case badTime = "bad_time"
    /// Latitude or longitude is missing, not a number, non-finite or out of range.
    case badCoordinate = "bad_coordinate"
    /// The record is not well-formed (wrong field count, bad JSON, noise bytes, truncated XML…).
    case malformed
    /// An NMEA sentence whose checksum is missing or does not match.
    case badChecksum = "bad_checksum"
    /// The receiver itself says there is no fix (NMEA RMC status V, GGA quality 0, GSA mode 1).
    case invalidFix = "invalid_fix"
    /// An NMEA epoch with a position but no RMC sentence, so its date is unknown.
    case incompleteEpoch = "incomplete_epoch"

    /// A human-readable phrase, e.g. `bad checksum`.
    public var description: String { rawValue.replacingOccurrences(of: "_", with: " ") }
}
