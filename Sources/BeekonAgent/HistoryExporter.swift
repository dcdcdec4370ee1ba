import BeekonWire
import Beekon
import Foundation

/// Export formats for `beekon history`.
enum ExportFormat: String, CaseIterable, Sendable {
    case ndjson, geojson, gpx, csv
}

/// Renders stored fixes (already in time order) in each export format.
/// Output is produced in chunks through `emit` so large histories stream.
struct HistoryExporter {
    var emit: (String) -> Void

    func export(_ locations: [Location], as format: ExportFormat) {
        switch format {
        case .ndjson: ndjson(locations)
        case .csv: csv(locations)
        case .geojson: geojson(locations)
        case .gpx: gpx(locations)
        }
    }

    /// One schema-v1 location object per line, plus `session_id`.
    func ndjson(_ locations: [Location]) {
        var chunk = ""
        for l in locations {
            var w = WireJSONWriter(capacity: 300)
            w.write(l.wire, extra: [("session_id", "\"\(l.sessionId.wireString)\"")])
            chunk += String(decoding: w.bytes, as: UTF8.self) + "\n"
            if chunk.utf8.count > 64 * 1024 {
                emit(chunk)
                chunk = ""
            }
        }
        emit(chunk)
    }

    static let csvHeader =
        "id,session_id,timestamp,latitude,longitude,accuracy,speed,bearing,altitude,trigger,motion,is_mock,activity,quality"

    /// RFC 4180 CSV with a header row; empty cells for absent values.
    func csv(_ locations: [Location]) {
        var chunk = Self.csvHeader + "\n"
        for l in locations {
            let cells: [String] = [
                l.id.wireString, l.sessionId.wireString, WireTimestamp(l.timestamp).description,
                num(l.latitude), num(l.longitude), opt(l.accuracy), opt(l.speed), opt(l.bearing), opt(l.altitude),
                l.trigger.rawValue, l.motion.rawValue, l.isMock ? "true" : "false",
                l.activity?.rawValue ?? "", l.quality?.rawValue ?? "",
            ]
            chunk += cells.joined(separator: ",") + "\n"
            if chunk.utf8.count > 64 * 1024 {
                emit(chunk)
                chunk = ""
            }
        }
        emit(chunk)
    }

    /// A FeatureCollection with one feature per session: a LineString (a Point when the
    /// session has one fix), coordinates in [lon, lat(, alt)] order, with per-fix times.
    func geojson(_ locations: [Location]) {
        emit("{\"type\":\"FeatureCollection\",\"features\":[")
        for (i, session) in Self.sessions(locations).enumerated() {
            let coords = session.map { l -> String in
                l.altitude.map { "[\(num(l.longitude)),\(num(l.latitude)),\(num($0))]" }
                    ?? "[\(num(l.longitude)),\(num(l.latitude))]"
            }
            let geometry =
                session.count == 1
                ? "{\"type\":\"Point\",\"coordinates\":\(coords[0])}"
                : "{\"type\":\"LineString\",\"coordinates\":[\(coords.joined(separator: ","))]}"
            let times = session.map { "\"\(WireTimestamp($0.timestamp))\"" }.joined(separator: ",")
            let props =
                "{\"session_id\":\"\(session[0].sessionId.wireString)\",\"fixes\":\(session.count),"
                + "\"start\":\"\(WireTimestamp(session.first!.timestamp))\",\"end\":\"\(WireTimestamp(session.last!.timestamp))\","
                + "\"coordTimes\":[\(times)]}"
            emit((i > 0 ? "," : "") + "{\"type\":\"Feature\",\"geometry\":\(geometry),\"properties\":\(props)}")
        }
        emit("]}\n")
    }

    /// GPX 1.1: one `trk` per session, one `trkseg`, `trkpt` with `ele` and `time`
    /// (schema order); accuracy, speed and course in a Beekon extension namespace.
    func gpx(_ locations: [Location]) {
        emit(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="beekon" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xmlns:beekon="https://beekon.dev/xmlschemas/gpx/1" \
            xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">

            """)
        for session in Self.sessions(locations) {
            var chunk = "<trk><name>\(session[0].sessionId.wireString)</name><trkseg>\n"
            for l in session {
                chunk += "<trkpt lat=\"\(num(l.latitude))\" lon=\"\(num(l.longitude))\">"
                if let alt = l.altitude { chunk += "<ele>\(num(alt))</ele>" }
                chunk += "<time>\(WireTimestamp(l.timestamp))</time>"
                var ext = ""
                if let a = l.accuracy { ext += "<beekon:accuracy>\(num(a))</beekon:accuracy>" }
                if let s = l.speed { ext += "<beekon:speed>\(num(s))</beekon:speed>" }
                if let b = l.bearing { ext += "<beekon:course>\(num(b))</beekon:course>" }
                if !ext.isEmpty { chunk += "<extensions>\(ext)</extensions>" }
                chunk += "</trkpt>\n"
                if chunk.utf8.count > 64 * 1024 {
                    emit(chunk)
                    chunk = ""
                }
            }
            emit(chunk + "</trkseg></trk>\n")
        }
        emit("</gpx>\n")
    }

    /// Groups time-ordered fixes by session, sessions ordered by their first fix.
    static func sessions(_ locations: [Location]) -> [[Location]] {
        var order: [UUID] = []
        var groups: [UUID: [Location]] = [:]
        for l in locations {
            if groups[l.sessionId] == nil { order.append(l.sessionId) }
            groups[l.sessionId, default: []].append(l)
        }
        return order.map { groups[$0]! }
    }

    private func num(_ v: Double) -> String {
        var w = WireJSONWriter(capacity: 24)
        w.number(v)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private func opt(_ v: Double?) -> String { v.map(num) ?? "" }
}
