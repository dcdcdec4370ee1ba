import Foundation
import Beekon

/// Reads a CSV track with a header row (SRC-4).
///
/// The delimiter is `,` (or `;`/tab when the header clearly uses one);
/// quoted fields follow RFC 4180. Column names are matched case-insensitively,
/// ignoring spaces, dashes and underscores:
/// - time (required): `time`, `timestamp`, `datetime`, `date_time`, `utc`, `time_utc`, `recorded_at`;
///   ISO 8601, or a Unix epoch in seconds (milliseconds when above 1e11);
/// - latitude (required): `lat`, `latitude`; longitude (required): `lon`, `lng`, `long`, `longitude`;
/// - optional: `accuracy`/`horizontal_accuracy`/`hacc` (m), `speed` (m/s),
///   `bearing`/`course`/`heading` (degrees), `altitude`/`alt`/`ele`/`elevation` (m),
///   `is_mock`/`mock` (`true`/`1`/`yes`).
///
/// A row with too few fields, an unterminated quote, a bad coordinate or a
/// bad time is skipped and counted; blank lines are ignored.
public enum CSVTrackReader {
    /// Reads CSV text; `source` names it in messages.
    /// - Throws: `TrackReadError` with a one-line message naming `source`: no latitude/longitude columns, no usable row.
    public static func read(_ data: Data, source: String = "<csv>") throws(TrackReadError) -> TrackReadResult {
        var text = Substring(String(decoding: data, as: UTF8.self))
        if text.first == "\u{FEFF}" { text = text.dropFirst() }
        let delimiter = CSVRecordSplitter.delimiter(forFirstLineOf: text)
        var records = CSVRecordSplitter.records(text, delimiter: delimiter)[...]
        guard let header = records.popFirst() else {
            throw .notATrack(file: source, format: .csv, reason: "the file is empty")
        }
        let columns = try Columns(header: header, source: source)
        var d = TrackDiagnostics(format: .csv)
        var fixes: [RawFix] = []
        fixes.reserveCapacity(records.count)
        for r in records {
            d.records += 1
            if r.unterminatedQuote {
                d.skip(.malformed, line: r.line, "unterminated or overlong quoted field")
                continue
            }
            guard r.fields.count > columns.required else {
                d.skip(.malformed, line: r.line, "\(r.fields.count) fields, the header has \(columns.count)")
                continue
            }
            func value(_ i: Int?) -> Substring? {
                guard let i, i < r.fields.count else { return nil }
                return Substring(r.fields[i])
            }
            guard let lat = FixValues.latitude(value(columns.lat)), let lon = FixValues.longitude(value(columns.lon)) else {
                d.skip(
                    .badCoordinate, line: r.line,
                    "invalid latitude/longitude \"\(r.fields[columns.lat].prefix(30))\", \"\(r.fields[columns.lon].prefix(30))\"")
                continue
            }
            let timeText = r.fields[columns.time]
            guard !timeText.allSatisfy({ $0 == " " }) else {
                d.skip(.missingTime, line: r.line, "empty time")
                continue
            }
            guard let time = FixValues.time(Substring(timeText)) else {
                d.skip(.badTime, line: r.line, "unreadable time \"\(timeText.prefix(40))\"")
                continue
            }
            let mock = value(columns.mock).map { ["true", "1", "yes", "y"].contains($0.trimmingCharacters(in: .whitespaces).lowercased()) }
            fixes.append(
                RawFix(
                    timestamp: time, latitude: lat, longitude: lon,
                    accuracy: FixValues.number(value(columns.accuracy)),
                    speed: FixValues.number(value(columns.speed)),
                    bearing: FixValues.number(value(columns.bearing)),
                    altitude: FixValues.number(value(columns.altitude)),
                    isMock: mock ?? false
                ))
            d.fixes += 1
        }
        guard !fixes.isEmpty else {
            if d.records == 0 { throw .notATrack(file: source, format: .csv, reason: "a header row but no data rows") }
            throw .noFixes(file: source, diagnostics: d)
        }
        return TrackReadResult(fixes: fixes, diagnostics: d)
    }

    /// Reads a CSV file.
    /// - Throws: `TrackReadError` when the file cannot be read or holds no usable row.
    public static func read(contentsOf url: URL) throws(TrackReadError) -> TrackReadResult {
        try read(TrackFile.load(url), source: url.lastPathComponent)
    }

    /// The header's column indexes.
    struct Columns {
        static let timeNames: Set = ["time", "timestamp", "datetime", "utc", "timeutc", "recordedat", "ts"]
        static let latNames: Set = ["lat", "latitude"]
        static let lonNames: Set = ["lon", "lng", "long", "longitude"]
        static let accuracyNames: Set = ["accuracy", "horizontalaccuracy", "hacc", "accuracym"]
        static let speedNames: Set = ["speed", "speedmps"]
        static let bearingNames: Set = ["bearing", "course", "heading"]
        static let altitudeNames: Set = ["altitude", "alt", "ele", "elevation"]
        static let mockNames: Set = ["ismock", "mock"]

        var count: Int
        var time: Int, lat: Int, lon: Int
        var accuracy: Int?, speed: Int?, bearing: Int?, altitude: Int?, mock: Int?
        /// The highest required index: a row needs more fields than this.
        var required: Int { max(time, lat, lon) }

        init(header: CSVRecordSplitter.Record, source: String) throws(TrackReadError) {
            let names = header.fields.map { f in
                String(f.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) })
            }
            func find(_ set: Set<String>) -> Int? { names.firstIndex { set.contains($0) } }
            // Escaped control characters: a quoted field may hold a line break, and the message is one line.
            let shown = header.fields.prefix(8).map { field in
                String(field.prefix(20)).unicodeScalars.map { c in
                    c.properties.generalCategory == .control || Character(c).isNewline ? c.escaped(asASCII: true) : String(c)
                }.joined()
            }.joined(separator: ",")
            guard let lat = find(Self.latNames), let lon = find(Self.lonNames) else {
                throw .notATrack(
                    file: source, format: .csv,
                    reason: "line \(header.line): the header (\(shown)) has no lat/latitude and lon/lng/longitude columns")
            }
            guard let time = find(Self.timeNames) else {
                throw .notATrack(
                    file: source, format: .csv,
                    reason: "line \(header.line): the header (\(shown)) has no time/timestamp column; replay needs fix times")
            }
            self.count = names.count
            self.time = time
            self.lat = lat
            self.lon = lon
            accuracy = find(Self.accuracyNames)
            speed = find(Self.speedNames)
            bearing = find(Self.bearingNames)
            altitude = find(Self.altitudeNames)
            mock = find(Self.mockNames)
        }
    }
}
