import BeekonWire
import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif
import Beekon

/// The `XMLParserDelegate` behind `GPXReader`: collects points per kind
/// (`trkpt`, `rtept`, `wpt`) with their diagnostics.
final class GPXParserDelegate: NSObject, XMLParserDelegate {
    enum Kind: Int, CaseIterable { case trkpt, rtept, wpt }

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
    private var diagnostics: [TrackDiagnostics] = Array(repeating: TrackDiagnostics(format: .gpx), count: Kind.allCases.count)

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
            if name != "gpx" {
                rootProblem = "the root element is <\(elementName)>, not <gpx>"
                parser.abortParsing()
            }
            return
        }
        text = ""
        guard point == nil else { return }
        let kind: Kind
        switch name {
        case "trkpt": kind = .trkpt
        case "rtept": kind = .rtept
        case "wpt": kind = .wpt
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
        case "ele", "elevation", "altitude": p.ele = p.ele ?? value
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
        let tag = "<\(p.kind)>"
        diagnostics[k].records += 1
        guard let lat = FixValues.latitude(p.latText.map { Substring($0) }),
            let lon = FixValues.longitude(p.lonText.map { Substring($0) })
        else {
            diagnostics[k].skip(
                .badCoordinate, line: p.line, "\(tag) has a missing or invalid lat/lon (\(p.latText ?? "none"), \(p.lonText ?? "none"))")
            return
        }
        guard let timeText = p.time?.trimmingCharacters(in: .whitespacesAndNewlines), !timeText.isEmpty else {
            diagnostics[k].skip(.missingTime, line: p.line, "\(tag) has no <time>")
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
