import BeekonWire
import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Beekon

/// The `XMLParserDelegate` behind `GPXReader` and `TCXReader`: collects points per kind
/// (GPX `trkpt`, `rtept`, `wpt`; TCX `Trackpoint`, kept as `trkpt`) with their diagnostics.
/// A TCX point carries its position in `Position/LatitudeDegrees` and `LongitudeDegrees`
/// child elements and its altitude in `AltitudeMeters`; everything else is read the same way.
final class GPXParserDelegate: NSObject, XMLParserDelegate {
    enum Kind: Int, CaseIterable { case trkpt, rtept, wpt }

    /// The XML track dialect being read: its format and root element (lower case).
    let format: TrackFormat
    private let rootName: String

    /// Values collected for the point being parsed.
    struct Point {
        var kind: Kind
        var line: Int
        var latText: String?
        var lonText: String?
        var depth: Int
        var time: String?
        var ele: String?
        var speed: String?
        var course: String?
        var hAcc: String?
        var hdop: String?
        var fix: String?
    }

    private(set) var sawRoot = false
    private(set) var rootProblem: String?
    /// Elements opened and not yet closed; above 0 after parsing means the document was cut off.
    private(set) var depth = 0
    private var point: Point?
    private var text = ""
    private var fixes: [[RawFix]] = Array(repeating: [], count: Kind.allCases.count)
    private var diagnostics: [TrackDiagnostics]

    /// A delegate for `format`: `.gpx` (root `<gpx>`) or `.tcx` (root `<TrainingCenterDatabase>`).
    init(format: TrackFormat = .gpx) {
        self.format = format
        rootName = format == .tcx ? "trainingcenterdatabase" : "gpx"
        diagnostics = Array(repeating: TrackDiagnostics(format: format), count: Kind.allCases.count)
    }

    /// The fixes and diagnostics of the kind that is used: trkpt, else rtept, else wpt.
    func chosenPoints() -> ([RawFix], TrackDiagnostics) {
        for kind in Kind.allCases where diagnostics[kind.rawValue].records > 0 {
            return (fixes[kind.rawValue], diagnostics[kind.rawValue])
        }
        return ([], diagnostics[Kind.trkpt.rawValue])
    }

    static func localName(_ name: String) -> String {
        let local = name.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? name
        return local.lowercased()
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes: [String: String] = [:]
    ) {
        depth += 1
        let name = Self.localName(elementName)
        if !sawRoot {
            sawRoot = true
            if name != rootName {
                rootProblem = "the root element is <\(elementName)>, not <\(format == .tcx ? "TrainingCenterDatabase" : "gpx")>"
                parser.abortParsing()
            }
            return
        }
        text = ""
        guard point == nil else { return }
        let kind: Kind
        switch (format, name) {
        case (.tcx, "trackpoint"), (.gpx, "trkpt"): kind = .trkpt
        case (.gpx, "rtept"): kind = .rtept
        case (.gpx, "wpt"): kind = .wpt
        default: return
        }
        var lat: String?
        var lon: String?
        for (key, value) in attributes {
            switch Self.localName(key) {
            case "lat": lat = value
            case "lon": lon = value
            default: break
            }
        }
        point = Point(kind: kind, line: parser.lineNumber, latText: lat, lonText: lon, depth: depth)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard point != nil, text.utf8.count < 4096 else { return }
        text += string
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
    ) {
        defer { depth -= 1 }
        guard var p = point else { return }
        if depth == p.depth {
            point = nil
            finish(p)
            return
        }
        let value = text
        text = ""
        switch Self.localName(elementName) {
        case "time" where depth == p.depth + 1: p.time = value
        case "latitudedegrees" where format == .tcx: p.latText = p.latText ?? value
        case "longitudedegrees" where format == .tcx: p.lonText = p.lonText ?? value
        case "ele", "elevation", "altitude", "altitudemeters": p.ele = p.ele ?? value
        case "speed": p.speed = p.speed ?? value
        case "course", "bearing": p.course = p.course ?? value
        case "hacc", "horizontalaccuracy", "horizontal_accuracy", "accuracy": p.hAcc = p.hAcc ?? value
        case "hdop": p.hdop = p.hdop ?? value
        case "fix" where depth == p.depth + 1: p.fix = value
        default: break
        }
        point = p
    }

    private func finish(_ p: Point) {
        let k = p.kind.rawValue
        let tag = format == .tcx ? "<Trackpoint>" : "<\(p.kind)>"
        diagnostics[k].records += 1
        guard let lat = FixValues.latitude(p.latText.map { Substring($0) }),
            let lon = FixValues.longitude(p.lonText.map { Substring($0) })
        else {
            diagnostics[k].skip(
                .badCoordinate, line: p.line, "\(tag) has a missing or invalid lat/lon (\(p.latText ?? "none"), \(p.lonText ?? "none"))")
            return
        }
        guard let timeText = p.time?.trimmingCharacters(in: .whitespacesAndNewlines), !timeText.isEmpty else {
            diagnostics[k].skip(.missingTime, line: p.line, "\(tag) has no <\(format == .tcx ? "Time" : "time")>")
            return
        }
        guard let ts = WireTimestamp(iso8601: timeText) else {
            diagnostics[k].skip(.badTime, line: p.line, "\(tag) has an unreadable <time> \"\(timeText.prefix(40))\"")
            return
        }
        if p.fix?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "none" {
            diagnostics[k].skip(.invalidFix, line: p.line, "\(tag) has <fix>none</fix>")
            return
        }
        let accuracy =
            FixValues.number(p.hAcc.map { Substring($0) })
            ?? FixValues.accuracy(hdop: FixValues.number(p.hdop.map { Substring($0) }))
        let fix = RawFix(
            timestamp: ts.date, latitude: lat, longitude: lon,
            accuracy: accuracy,
            speed: FixValues.number(p.speed.map { Substring($0) }),
            bearing: FixValues.number(p.course.map { Substring($0) }),
            altitude: FixValues.number(p.ele.map { Substring($0) })
        )
        fixes[k].append(fix)
        diagnostics[k].fixes += 1
    }
}
