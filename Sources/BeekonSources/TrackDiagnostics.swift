/// What a reader saw while turning a file into fixes: how many records it
/// examined and how many it skipped, and why.
public struct TrackDiagnostics: Sendable, Hashable {
    /// How many problem messages are kept in `problems`.
    public static let maxProblems = 10

    /// The format that was read.
    public var format: TrackFormat
    /// Records examined: GPX points, NMEA sentences, CSV data rows, NDJSON lines.
    public var records: Int = 0
    /// Fixes produced.
    public var fixes: Int = 0
    /// Skipped records per reason.
    public var skippedByReason: [TrackSkipReason: Int] = [:]
    /// NMEA sentences that were well-formed but not used (GSV, HDG, proprietary, …).
    public var ignoredSentences: Int = 0
    /// The first few problems, each `line N: what is wrong` (at most `maxProblems`).
    public var problems: [String] = []

    /// Creates empty diagnostics for a format.
    public init(format: TrackFormat) { self.format = format }

    /// Total skipped records, all reasons together.
    public var skipped: Int { skippedByReason.values.reduce(0, +) }

    /// Skipped records for one reason.
    public func skipped(_ reason: TrackSkipReason) -> Int { skippedByReason[reason, default: 0] }

    /// Counts a skipped record and keeps its message if there is room.
    mutating func skip(_ reason: TrackSkipReason, line: Int?, _ message: @autoclosure () -> String) {
        skippedByReason[reason, default: 0] += 1
        note(line: line, message())
    }

    /// Keeps a problem message without counting a skip.
    mutating func note(line: Int?, _ message: String) {
        guard problems.count < Self.maxProblems else { return }
        if let line { problems.append("line \(line): \(message)") } else { problems.append(message) }
    }

    /// A one-line summary, e.g. `GPX: 1856 records, 1856 fixes, 0 skipped`.
    public var summary: String {
        var out = "\(format): \(records) records, \(fixes) fixes, \(skipped) skipped"
        let parts = TrackSkipReason.allCases.compactMap { r -> String? in
            let n = skipped(r)
            return n > 0 ? "\(n) \(r)" : nil
        }
        if !parts.isEmpty { out += " (" + parts.joined(separator: ", ") + ")" }
        return out
    }
}
