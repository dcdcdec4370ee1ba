import Foundation
import BeekonWire

/// Value parsing and validation shared by the readers. Values are taken as
/// recorded, never invented: a non-finite optional becomes nil; a bad
/// coordinate rejects the record.
enum FixValues {
    /// UERE (user equivalent range error) in metres used to turn HDOP into a
    /// horizontal accuracy: accuracy = HDOP × 5 m. 5 m is the usual figure for
    /// a consumer L1 receiver; HDOP 0 (receivers' "unknown") gives no accuracy.
    static let uereMeters = 5.0

    /// Knots to metres per second.
    static let metersPerSecondPerKnot = 1852.0 / 3600.0

    /// A latitude in degrees, or nil if it is not a finite number in [-90, 90].
    static func latitude(_ text: Substring?) -> Double? {
        guard let v = number(text), (-90...90).contains(v) else { return nil }
        return v
    }

    /// A longitude in degrees, or nil if it is not a finite number in [-180, 180].
    static func longitude(_ text: Substring?) -> Double? {
        guard let v = number(text), (-180...180).contains(v) else { return nil }
        return v
    }

    /// A finite decimal number (surrounding whitespace allowed), or nil.
    static func number(_ text: Substring?) -> Double? {
        guard let text else { return nil }
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !t.isEmpty, t.utf8.count < 64,
            t.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45 }),
            let v = Double(t), v.isFinite
        else { return nil }
        return v
    }

    /// The value if finite, else nil.
    static func finite(_ v: Double?) -> Double? {
        guard let v, v.isFinite else { return nil }
        return v
    }

    /// An HDOP turned into metres with `uereMeters`; nil for missing, zero or negative HDOP.
    static func accuracy(hdop: Double?) -> Double? {
        guard let h = finite(hdop), h > 0 else { return nil }
        return h * uereMeters
    }

    /// A time written as ISO 8601 (`WireTimestamp(iso8601:)` forms) or as a Unix
    /// epoch number: seconds, or milliseconds when its magnitude is above 1e11
    /// (i.e. after 1973-03-03 in milliseconds, beyond year 5138 in seconds).
    static func time(_ text: Substring) -> Date? {
        let t = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let ts = WireTimestamp(iso8601: t) { return ts.date }
        guard let v = number(Substring(t)) else { return nil }
        return epoch(v)
    }

    /// A Unix epoch number (seconds, or milliseconds above 1e11) as a date; nil beyond ±year 10000.
    static func epoch(_ v: Double) -> Date? {
        guard v.isFinite else { return nil }
        let seconds = abs(v) > 1e11 ? v / 1000 : v
        guard abs(seconds) < 253_402_300_800 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Unix milliseconds at 00:00 UTC of a calendar date; nil for an invalid date.
    static func dayMillis(year: Int, month: Int, day: Int) -> Int64? {
        func pad(_ v: Int, _ w: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, w - s.count)) + s
        }
        guard (0...9999).contains(year) else { return nil }
        return WireTimestamp(iso8601: "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))")?.millis
    }
}
