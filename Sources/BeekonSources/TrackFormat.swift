/// The recorded-track formats the replay source can read (SRC-4).
public enum TrackFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// GPX 1.0 or 1.1 (`trkpt`, else `rtept`, else `wpt`).
    case gpx
    /// Garmin Training Center XML (`Trackpoint` with `Position` and `Time`).
    case tcx
    /// An NMEA 0183 log (GGA/RMC/GSA/VTG).
    case nmea
    /// Comma-separated values with a header row.
    case csv
    /// Newline-delimited JSON objects with the schema-v1 location field names.
    case ndjson

    /// The upper-case name used in messages, e.g. `GPX`.
    public var description: String { rawValue.uppercased() }

    /// The format implied by a file extension (case-insensitive, without the dot); nil when unknown.
    ///
    /// `gpx` → GPX; `tcx` → TCX; `nmea`, `log`, `nma` → NMEA; `csv` → CSV; `ndjson`, `jsonl`, `json` → NDJSON.
    public init?(fileExtension ext: String) {
        switch ext.lowercased() {
        case "gpx": self = .gpx
        case "tcx": self = .tcx
        case "nmea", "log", "nma": self = .nmea
        case "csv": self = .csv
        case "ndjson", "jsonl", "json": self = .ndjson
        default: return nil
        }
    }
}
