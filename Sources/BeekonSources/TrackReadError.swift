import Beekon

/// Why a track file cannot be replayed. Every message is one line naming the
/// file, where the problem is, and what is wrong.
public enum TrackReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file cannot be read at all (missing, permissions, I/O).
    case unreadable(file: String, reason: String)
    /// Neither the extension nor the content says which track format this is.
    case unknownFormat(file: String)
    /// The content is not a track of the given format (e.g. not XML, root is not `<gpx>`, no lat column).
    case notATrack(file: String, format: TrackFormat, reason: String)
    /// The file is a track of the given format but not one record became a fix.
    case noFixes(file: String, diagnostics: TrackDiagnostics)

    /// The one-line message: control characters and line breaks echoed from the file (a
    /// checksum, a header field) are escaped, so the message stays one line.
    public var description: String {
        message.unicodeScalars.map { c in
            c.properties.generalCategory == .control || Character(c).isNewline ? c.escaped(asASCII: true) : String(c)
        }.joined()
    }

    private var message: String {
        switch self {
        case .unreadable(let file, let reason):
            return "\(file): cannot read the file: \(reason)"
        case .unknownFormat(let file):
            return "\(file): unknown track format; use a .gpx, .tcx, .nmea/.log, .csv or .ndjson/.jsonl file"
        case .notATrack(let file, let format, let reason):
            let article = format == .nmea || format == .ndjson ? "an" : "a"
            return "\(file): not \(article) \(format) track: \(reason)"
        case .noFixes(let file, let d):
            var out = "\(file): no usable fix in \(d.records) \(d.format) records"
            let parts = TrackSkipReason.allCases.compactMap { r -> String? in
                let n = d.skipped(r)
                return n > 0 ? "\(n) \(r)" : nil
            }
            if !parts.isEmpty { out += " (" + parts.joined(separator: ", ") + ")" }
            if let first = d.problems.first { out += "; first problem: \(first)" }
            return out
        }
    }

    /// The same failure as the provider seam's error, for sources that open files when started.
    public var locationProviderError: LocationProviderError { .failed(description) }
}
