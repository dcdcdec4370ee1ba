import BeekonWire
import Foundation

/// The body of a history answer: `{"install_id","zoom","tolerance_m","raw_count","count",
/// "truncated","points":[[lon,lat,ms]…],"source","level","bounds":[w,s,e,n]|null}`.
struct HistoryAnswer: Sendable {
    var source: HistoryQuery.Source
    /// The zoom simplified for (nil for raw).
    var zoom: Int?
    /// The overview tier level read (nil unless `source` is overview).
    var level: Int?
    /// The largest distance, in metres, from a raw fix of the window to the line drawn
    /// (at the first point's latitude; 0 for raw).
    var toleranceMeters = 0.0
    /// Raw fixes in the window.
    var rawCount = 0
    var truncated = false
    var bounds: TrackBounds?
    var points: [TrackPoint] = []

    init(source: HistoryQuery.Source) {
        self.source = source
    }

    /// The JSON bytes (coordinates at 6 decimals, about 0.1 m).
    func json(_ install: UUID) -> [UInt8] {
        var w = WireJSONWriter(capacity: 256 + points.count * 40)
        w.raw("{\"install_id\":")
        w.string(install.wireString)
        w.raw(",\"zoom\":")
        w.raw(zoom.map(String.init) ?? "null")
        w.raw(",\"tolerance_m\":")
        w.number((toleranceMeters * 100).rounded() / 100)
        w.raw(",\"raw_count\":\(rawCount),\"count\":\(points.count),\"truncated\":\(truncated),\"source\":")
        w.string(source.rawValue)
        w.raw(",\"level\":")
        w.raw(level.map(String.init) ?? "null")
        w.raw(",\"bounds\":")
        if let b = bounds {
            w.raw("[")
            for (i, v) in [b.west, b.south, b.east, b.north].enumerated() {
                if i > 0 { w.raw(",") }
                w.number((v * 1e6).rounded() / 1e6)
            }
            w.raw("]")
        } else {
            w.raw("null")
        }
        w.raw(",\"points\":[")
        for (i, p) in points.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("[")
            w.number((p.longitude * 1e6).rounded() / 1e6)
            w.raw(",")
            w.number((p.latitude * 1e6).rounded() / 1e6)
            w.raw(",\(p.millis)]")
        }
        w.raw("]}")
        return w.bytes
    }
}
