import Foundation
import Beekon

/// Reads newline-delimited JSON: one object per line with the schema-v1
/// location field names (SRC-4), so `beekon history --format ndjson` output
/// can be replayed.
///
/// Used keys: `timestamp` (required; ISO 8601 string, or a Unix epoch number
/// in seconds — milliseconds when above 1e11), `latitude`, `longitude`
/// (required numbers), and the optional `accuracy`, `speed`, `bearing`,
/// `altitude` (numbers), `is_mock` (boolean) and `activity` (a schema-v1
/// activity name). Other keys (`id`, `session_id`, `trigger`, …) are ignored.
/// A line that is not a JSON object, or lacks a usable position or time, is
/// skipped and counted; blank lines are ignored.
public enum NDJSONTrackReader {
    /// Reads NDJSON text; `source` names it in messages.
    /// - Throws: `TrackReadError` with a one-line message naming `source` when no line is a usable fix.
    public static func read(_ data: Data, source: String = "<ndjson>") throws(TrackReadError) -> TrackReadResult {
        var d = TrackDiagnostics(format: .ndjson)
        var fixes: [RawFix] = []
        var objects = 0
        let decoder = JSONDecoder()
        var lineNumber = 0
        var start = data.startIndex
        while start < data.endIndex {
            lineNumber += 1
            let end = data[start...].firstIndex(of: 0x0A) ?? data.endIndex
            let line = data[start..<end]
            start = end < data.endIndex ? end + 1 : end
            guard line.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
            d.records += 1
            guard let object = try? decoder.decode([String: JSONScalar].self, from: line) else {
                d.skip(.malformed, line: lineNumber, "not a JSON object")
                continue
            }
            objects += 1
            switch fix(from: object) {
            case .success(let f):
                fixes.append(f)
                d.fixes += 1
            case .failure(let problem):
                d.skip(problem.reason, line: lineNumber, problem.message)
            }
        }
        guard objects > 0 else {
            var reason = d.records == 0 ? "the file is empty" : "no line is a JSON object"
            if let first = d.problems.first { reason += "; first problem: \(first)" }
            throw .notATrack(file: source, format: .ndjson, reason: reason)
        }
        guard !fixes.isEmpty else { throw .noFixes(file: source, diagnostics: d) }
        return TrackReadResult(fixes: fixes, diagnostics: d)
    }

    /// Reads an NDJSON file.
    /// - Throws: `TrackReadError` when the file cannot be read or holds no usable fix.
    public static func read(contentsOf url: URL) throws(TrackReadError) -> TrackReadResult {
        try read(TrackFile.load(url), source: url.lastPathComponent)
    }

    struct Problem: Error {
        var reason: TrackSkipReason
        var message: String
    }

    static func fix(from o: [String: JSONScalar]) -> Result<RawFix, Problem> {
        guard case .number(let latV)? = o["latitude"], (-90...90).contains(latV),
            case .number(let lonV)? = o["longitude"], (-180...180).contains(lonV)
        else { return .failure(Problem(reason: .badCoordinate, message: "missing or invalid latitude/longitude")) }
        let time: Date?
        switch o["timestamp"] {
        case .string(let s)?: time = FixValues.time(Substring(s))
        case .number(let n)?: time = FixValues.epoch(n)
        case nil, .null?: return .failure(Problem(reason: .missingTime, message: "no timestamp"))
        default: time = nil
        }
        guard let time else { return .failure(Problem(reason: .badTime, message: "unreadable timestamp")) }
        func number(_ key: String) -> Double? {
            if case .number(let v)? = o[key] { return v }
            return nil
        }
        var mock = false
        if case .bool(let b)? = o["is_mock"] { mock = b }
        var activity: Activity?
        if case .string(let a)? = o["activity"] { activity = Activity(rawValue: a) }
        return .success(
            RawFix(
                timestamp: time, latitude: latV, longitude: lonV,
                accuracy: number("accuracy"), speed: number("speed"), bearing: number("bearing"),
                altitude: number("altitude"), isMock: mock, activity: activity
            ))
    }
}
