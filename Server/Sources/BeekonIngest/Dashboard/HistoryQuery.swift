import BeekonWire
import Foundation
import Hummingbird

/// The parameters of `GET /v1/devices/{id}/history`, validated, and the choice between
/// the raw track, exact simplification of the raw fixes and the overview tier.
struct HistoryQuery: Sendable {
    /// Windows up to this long are simplified exactly from the raw fixes (≤ 21,600 at 1 Hz).
    static let exactWindowMillis: Int64 = 6 * 3_600_000

    /// Where the answer comes from (the response's `source`).
    enum Source: String, Sendable {
        /// Every fix (no `zoom` and no `fit`).
        case raw
        /// Radial pass + Douglas–Peucker over every raw fix of the window.
        case exact
        /// The overview tier (plus raw fixes of stale and cut buckets), then one more pass.
        case overview
    }

    var from: Int64
    var to: Int64
    /// The requested zoom (nil with `fit` until the window's box is known, and for raw).
    var zoom: Int?
    /// The view to fit, in CSS pixels.
    var fit: (width: Int, height: Int)?
    /// `exact=true`: never the tier.
    var exact = false

    /// Parses the query; a bad parameter gives the 400 to send.
    static func parse(_ params: Parameters, nowMillis: Int64) -> Result<HistoryQuery, HistoryQueryError> {
        var q = HistoryQuery(from: nowMillis - 86_400_000, to: nowMillis + 1)
        if let text = params["to"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return .failure(.init("to", "an ISO 8601 time")) }
            q.to = t.millis
        }
        if let text = params["from"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return .failure(.init("from", "an ISO 8601 time")) }
            q.from = t.millis
        }
        if let text = params["zoom"] {
            guard let z = Int(text), (0...22).contains(z) else { return .failure(.init("zoom", "0...22")) }
            q.zoom = z
        }
        if let text = params["fit"] {
            // Plain decimal numbers only (no sign, no leading zero), as the documented pattern says.
            let parts = text.split(separator: "x", omittingEmptySubsequences: false).compactMap { part in
                part.first != "0" && part.allSatisfy({ $0.isASCII && $0.isNumber }) ? Int(part) : nil
            }
            guard parts.count == 2, parts.allSatisfy({ (16...8192).contains($0) }) else {
                return .failure(.init("fit", "WIDTHxHEIGHT in pixels, 16...8192 each"))
            }
            q.fit = (parts[0], parts[1])
        }
        if let text = params["exact"] {
            guard let b = Bool(String(text)) else { return .failure(.init("exact", "true or false")) }
            q.exact = b
        }
        return .success(q)
    }

    /// The path this query takes.
    var source: Source {
        guard zoom != nil || fit != nil else { return .raw }
        return exact || to - from <= Self.exactWindowMillis ? .exact : .overview
    }

    /// The zoom to simplify for: the requested one, or the one fitting `bounds` in the view.
    func zoom(for bounds: TrackBounds?) -> Int {
        if let fit {
            guard let bounds else { return zoom ?? 2 }
            return TrackOverview.fitZoom(bounds, width: fit.width, height: fit.height)
        }
        return zoom ?? 0
    }
}

/// A history parameter that could not be used.
struct HistoryQueryError: Error, Sendable {
    /// The parameter and what it must be.
    let name: String, expected: String

    init(_ name: String, _ expected: String) {
        self.name = name
        self.expected = expected
    }
}
