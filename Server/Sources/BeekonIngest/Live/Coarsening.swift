import BeekonWire
import Foundation

/// Coarsens positions server-side for a share with a precision: latitude and longitude
/// are rounded to the fewest decimal places whose step is still at least `metres` on
/// the ground (longitude's step is measured at the rounded latitude), accuracy becomes
/// at least `metres`, altitude and beacon distances are rounded to `metres`, and speed and
/// bearing are left out (two fixes a second apart would give the position to well under
/// the precision). A coarsened value never carries more decimals than its precision
/// allows, on any endpoint or event (XR-4).
struct Coarsening: Sendable, Equatable {
    /// The precision, in metres (> 0).
    let metres: Double

    static let metresPerDegree = 111_320.0

    /// Decimal places for a step of at least `metres` where one degree is `metresPerDegree` long.
    static func decimals(metres: Double, metresPerDegree: Double) -> Int {
        guard metres > 0, metresPerDegree > metres else { return 0 }
        return max(0, Int((log10(metresPerDegree / metres)).rounded(.down)))
    }

    static func round(_ value: Double, decimals: Int) -> Double {
        let scale = pow(10, Double(decimals))
        return (value * scale).rounded() / scale
    }

    /// The coarsened (latitude, longitude).
    func coordinate(latitude: Double, longitude: Double) -> (Double, Double) {
        let lat = Self.round(latitude, decimals: Self.decimals(metres: metres, metresPerDegree: Self.metresPerDegree))
        let lonMetres = Self.metresPerDegree * cos(lat * .pi / 180)
        let lon = Self.round(longitude, decimals: Self.decimals(metres: metres, metresPerDegree: lonMetres))
        return (lat, lon)
    }

    /// A coarsened copy of a location.
    func location(_ l: WireLocation) -> WireLocation {
        var c = l
        (c.latitude, c.longitude) = coordinate(latitude: l.latitude, longitude: l.longitude)
        c.accuracy = max(l.accuracy ?? 0, metres)
        c.altitude = l.altitude.map(multiple)
        c.speed = nil
        c.bearing = nil
        return c
    }

    /// `value` rounded to a whole multiple of the precision (altitudes, beacon distances).
    func multiple(_ value: Double) -> Double { (value / metres).rounded() * metres }

    /// Keys a coarsened object never carries.
    static let withheld: Set<String> = ["speed", "bearing"]

    /// A coarsened copy of a stored fix.
    func fix(_ f: StoredFix) -> StoredFix {
        var c = f
        c.location = location(f.location)
        return c
    }

    /// A flat JSON object (an event payload) with `latitude`, `longitude`, `accuracy`,
    /// `altitude` and `distance` coarsened, speed and bearing left out, and every other member
    /// kept as it was. A nested `last_fix`
    /// object (device events) is coarsened the same way.
    func payload(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return "{}" }
        var w = WireJSONWriter(capacity: json.utf8.count + 16)
        write(object, into: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private func write(_ object: [String: Any], into w: inout WireJSONWriter) {
        var o = object
        if let lat = (o["latitude"] as? NSNumber)?.doubleValue, let lon = (o["longitude"] as? NSNumber)?.doubleValue {
            let (a, b) = coordinate(latitude: lat, longitude: lon)
            o["latitude"] = a
            o["longitude"] = b
            o["accuracy"] = max((o["accuracy"] as? NSNumber)?.doubleValue ?? 0, metres)
            if let alt = (o["altitude"] as? NSNumber)?.doubleValue { o["altitude"] = multiple(alt) }
            for key in Self.withheld { o[key] = nil }
        }
        if let distance = (o["distance"] as? NSNumber)?.doubleValue { o["distance"] = multiple(distance) }
        w.raw("{")
        for (i, key) in o.keys.sorted().enumerated() {
            if i > 0 { w.raw(",") }
            w.string(key)
            w.raw(":")
            switch o[key] {
            case let s as String: w.string(s)
            case let nested as [String: Any]: write(nested, into: &w)
            case let n as NSNumber where key.hasPrefix("is_") || key == "stale": w.raw(n.boolValue ? "true" : "false")
            case let n as NSNumber: w.number(n.doubleValue)
            case let d as Double: w.number(d)
            default: w.raw("null")
            }
        }
        w.raw("}")
    }
}
