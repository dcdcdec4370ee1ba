import BeekonWire
import Foundation

/// Renders a session's fixes as a GeoJSON FeatureCollection (RFC 7946):
/// one `LineString` feature (a `Point` for a single fix) with positions in
/// `[longitude, latitude(, altitude)]` order, and per-position times in
/// `properties.times` so GIS tools can animate it. One page of the track: when more fixes
/// follow, `properties.truncated` is true and the foreign member `next_cursor` fetches them.
enum GeoJSONTrack {
    static func render(sessionId: UUID, fixes: [StoredFix], next: FixCursor? = nil) -> [UInt8] {
        var w = WireJSONWriter(capacity: 256 + fixes.count * 64)
        // Altitude is a third coordinate only when every fix has one, so positions stay uniform.
        let alt = !fixes.isEmpty && fixes.allSatisfy { $0.location.altitude != nil }
        w.raw("{\"type\":\"FeatureCollection\",\"features\":[{\"type\":\"Feature\",\"geometry\":{\"type\":")
        w.string(fixes.count == 1 ? "Point" : "LineString")
        w.raw(",\"coordinates\":")
        if fixes.count == 1 {
            position(&w, fixes[0].location, alt)
        } else {
            w.raw("[")
            for (i, f) in fixes.enumerated() {
                if i > 0 { w.raw(",") }
                position(&w, f.location, alt)
            }
            w.raw("]")
        }
        w.raw("},\"properties\":{\"session_id\":")
        w.string(sessionId.wireString)
        if let first = fixes.first {
            w.raw(",\"install_id\":")
            w.string(first.installId.wireString)
            w.raw(",\"start\":")
            w.string(first.location.timestamp.description)
            w.raw(",\"end\":")
            w.string(fixes[fixes.count - 1].location.timestamp.description)
        }
        w.raw(",\"fix_count\":")
        w.number(Double(fixes.count))
        w.raw(",\"times\":[")
        for (i, f) in fixes.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(f.location.timestamp.description)
        }
        w.raw("]")
        if next != nil { w.raw(",\"truncated\":true") }
        w.raw("}}]")
        if let next {
            w.raw(",\"next_cursor\":")
            w.string(next.token)
        }
        w.raw("}")
        return w.bytes
    }

    private static func position(_ w: inout WireJSONWriter, _ l: WireLocation, _ withAltitude: Bool) {
        w.raw("[")
        w.number(l.longitude)
        w.raw(",")
        w.number(l.latitude)
        if withAltitude, let alt = l.altitude {
            w.raw(",")
            w.number(alt)
        }
        w.raw("]")
    }
}
