import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Beekon
import BeekonWire

/// Reads GPX 1.0 and 1.1 files (SRC-4).
///
/// Uses `trkpt` points; when the file has none, `rtept`, and when it has none
/// of those either, `wpt`. Per point: `lat`/`lon` attributes, `time` (required:
/// the SDK's gate works on fix time, so points without one are skipped and
/// counted), `ele`, and — from GPX 1.0 elements or any `extensions` child,
/// namespace prefix ignored, names case-insensitive — `speed` (m/s),
/// `course`/`bearing` (degrees), `hAcc`/`horizontalAccuracy`/`accuracy`
/// (metres), else `hdop` × 5 m (see `FixValues.uereMeters`). A point with
/// `<fix>none</fix>` is skipped as an invalid fix.
///
/// A file that breaks off mid-way (truncated XML) keeps the points read
/// before the break and reports the break in the diagnostics.
public enum GPXReader {
    /// Reads a GPX document; `source` names it in messages.
    /// - Throws: `TrackReadError` with a one-line message naming `source`: not XML, not GPX, or no timed track point.
    public static func read(_ data: Data, source: String = "<gpx>") throws(TrackReadError) -> TrackReadResult {
        try readXML(data, source: source, format: .gpx)
    }

    /// Reads a GPX or TCX document (the XML track formats share one parser; see `GPXParserDelegate`).
    static func readXML(_ data: Data, source: String, format: TrackFormat) throws(TrackReadError) -> TrackReadResult {
        let root = format == .tcx ? "</TrainingCenterDatabase>" : "</gpx>"
        let elements = format == .tcx ? "no <Trackpoint> element" : "no <trkpt>, <rtept> or <wpt> element"
        guard !data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            throw .notATrack(file: source, format: format, reason: "the file is empty")
        }
        let parser = XMLParser(data: Self.repairingUTF8(data))
        let delegate = GPXParserDelegate(format: format)
        parser.delegate = delegate
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        var ok = parser.parse()
        var message = ""
        if !ok {
            let code = (parser.parserError as NSError?)?.code ?? 0
            message = "XML error at line \(parser.lineNumber), column \(parser.columnNumber) (libxml2 code \(code))"
        } else if delegate.depth > 0 {
            // Some XMLParser implementations accept a document that stops mid-way.
            ok = false
            message = "the XML ends before \(root) at line \(parser.lineNumber)"
        }

        if let reason = delegate.rootProblem {
            throw .notATrack(file: source, format: format, reason: reason)
        }
        let (fixes, diagnostics) = delegate.chosenPoints()
        var d = diagnostics
        if !ok {
            guard delegate.sawRoot, d.records > 0 else {
                throw .notATrack(file: source, format: format, reason: message)
            }
            d.skip(.malformed, line: nil, "\(message); the points after it are lost")
        }
        guard delegate.sawRoot else {
            throw .notATrack(file: source, format: format, reason: "no <\(root.dropFirst(2).dropLast())> root element")
        }
        guard !fixes.isEmpty else {
            if d.records == 0 {
                throw .notATrack(file: source, format: format, reason: elements)
            }
            throw .noFixes(file: source, diagnostics: d)
        }
        return TrackReadResult(fixes: fixes, diagnostics: d)
    }

    /// FoundationXML on Linux force-unwraps element and attribute names decoded as UTF-8 and
    /// traps on invalid bytes in them, so a document read as UTF-8 gets invalid sequences
    /// replaced by U+FFFD first. A UTF-16 BOM or a declared encoding other than UTF-8 is left
    /// to libxml2, which converts the document to valid UTF-8 itself.
    static func repairingUTF8(_ data: Data) -> Data {
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) || ValidUTF8.string(data) != nil {
            return data
        }
        let prolog = String(decoding: data.prefix(256), as: UTF8.self).lowercased()
        if prolog.hasPrefix("<?xml"), let r = prolog.range(of: "encoding="),
            !prolog[r.upperBound...].dropFirst().hasPrefix("utf-8")
        {
            return data
        }
        return Data(String(decoding: data, as: UTF8.self).utf8)
    }

    /// Reads a GPX file.
    /// - Throws: `TrackReadError` when the file cannot be read or is not a usable GPX track.
    public static func read(contentsOf url: URL) throws(TrackReadError) -> TrackReadResult {
        try read(TrackFile.load(url), source: url.lastPathComponent)
    }
}
