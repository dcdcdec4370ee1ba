import Foundation
import Beekon

/// Reads an NMEA 0183 log file with `NMEAParser` (SRC-3, SRC-4).
public enum NMEAReader {
    /// Reads an NMEA log; `source` names it in messages.
    ///
    /// Throws `notATrack` when not one sentence passes its checksum, and
    /// `noFixes` when sentences do but no epoch has a valid fix.
    public static func read(_ data: Data, source: String = "<nmea>") throws(TrackReadError) -> TrackReadResult {
        var parser = NMEAParser()
        var fixes = parser.feed(data)
        fixes += parser.finish()
        let d = parser.diagnostics
        guard parser.validSentences > 0 else {
            var reason = "no NMEA sentence with a valid checksum"
            if d.records == 0 { reason += " (the file is empty)" }
            if let first = d.problems.first { reason += "; first problem: \(first)" }
            throw .notATrack(file: source, format: .nmea, reason: reason)
        }
        guard !fixes.isEmpty else { throw .noFixes(file: source, diagnostics: d) }
        return TrackReadResult(fixes: fixes, diagnostics: d)
    }

    /// Reads an NMEA log file.
    /// - Throws: `TrackReadError` when the file cannot be read or holds no valid RMC epoch.
    public static func read(contentsOf url: URL) throws(TrackReadError) -> TrackReadResult {
        try read(TrackFile.load(url), source: url.lastPathComponent)
    }
}
