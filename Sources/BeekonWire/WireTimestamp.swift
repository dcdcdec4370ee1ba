import Foundation

/// The schema-v1 timestamp: UTC with exactly three fractional digits and a
/// literal `Z` (`YYYY-MM-DDTHH:MM:SS.mmmZ`), carried as Unix milliseconds.
public struct WireTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var millis: Int64

    /// Creates a timestamp from Unix milliseconds.
    public init(millis: Int64) { self.millis = millis }

    /// Creates a timestamp from a date, truncated to the millisecond (the wire's precision).
    public init(_ date: Date) {
        self.millis = Self.unixMillis(date)
    }

    /// Unix milliseconds of `date`, truncated. `Date` stores a binary double, so a
    /// whole-millisecond instant often reads back as `n - 0.0000001` ms; values within
    /// a microsecond of a whole millisecond snap to it instead of truncating to `n - 1`.
    static func unixMillis(_ date: Date) -> Int64 {
        let x = date.timeIntervalSince1970 * 1000
        let nearest = x.rounded()
        return Int64(abs(x - nearest) < 0.001 ? nearest : x.rounded(.down))
    }

    /// The instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millis) / 1000) }

    public static func < (a: Self, b: Self) -> Bool { a.millis < b.millis }

    /// The exact wire form, e.g. `2026-06-15T12:34:56.789Z`. Written into a 24-byte
    /// buffer (it is on the path of every encoded fix); a year outside 0…9999, which the
    /// wire form cannot carry, is printed as it is.
    public var description: String {
        let (days, msOfDay) = Self.floorDivide(millis, 86_400_000)
        let (y, m, d) = Self.civil(fromDays: days)
        let h = msOfDay / 3_600_000
        let mi = msOfDay / 60_000 % 60
        let s = msOfDay / 1000 % 60
        let ms = msOfDay % 1000
        guard (0...9999).contains(y) else {
            var out = ""
            Self.pad(&out, y, 4)
            out += "-"
            Self.pad(&out, m, 2)
            out += "-"
            Self.pad(&out, d, 2)
            out += "T"
            Self.pad(&out, h, 2)
            out += ":"
            Self.pad(&out, mi, 2)
            out += ":"
            Self.pad(&out, s, 2)
            out += "."
            Self.pad(&out, ms, 3)
            out += "Z"
            return out
        }
        return String(unsafeUninitializedCapacity: 24) { out in
            func put(_ value: Int64, _ width: Int, at start: Int) {
                var v = value
                for i in stride(from: start + width - 1, through: start, by: -1) {
                    out[i] = UInt8(truncatingIfNeeded: 0x30 + v % 10)
                    v /= 10
                }
            }
            put(Int64(y), 4, at: 0)
            out[4] = 0x2D
            put(Int64(m), 2, at: 5)
            out[7] = 0x2D
            put(Int64(d), 2, at: 8)
            out[10] = 0x54
            put(Int64(h), 2, at: 11)
            out[13] = 0x3A
            put(Int64(mi), 2, at: 14)
            out[16] = 0x3A
            put(Int64(s), 2, at: 17)
            out[19] = 0x2E
            put(Int64(ms), 3, at: 20)
            out[23] = 0x5A
            return 24
        }
    }

    /// Parses the exact wire form only (24 characters); anything else is nil.
    public init?(wire text: String) {
        let u = Array(text.utf8)
        guard u.count == 24, u[4] == 0x2D, u[7] == 0x2D, u[10] == 0x54, u[13] == 0x3A,
            u[16] == 0x3A, u[19] == 0x2E, u[23] == 0x5A
        else { return nil }
        guard let y = Self.digits(u, 0, 4), let mo = Self.digits(u, 5, 2), let d = Self.digits(u, 8, 2),
            let h = Self.digits(u, 11, 2), let mi = Self.digits(u, 14, 2), let s = Self.digits(u, 17, 2),
            let ms = Self.digits(u, 20, 3)
        else { return nil }
        guard let value = Self.millis(y, mo, d, h, mi, s, ms) else { return nil }
        self.millis = value
    }

    /// Parses common ISO 8601 forms: a date (`2026-06-15`), or a date-time with
    /// optional fraction (any number of digits, truncated to milliseconds) and a
    /// `Z` or `±HH:MM`/`±HHMM` offset; a date-time without a zone is taken as UTC.
    public init?(iso8601 text: String) {
        let u = Array(text.utf8)
        guard u.count >= 10, u[4] == 0x2D, u[7] == 0x2D,
            let y = Self.digits(u, 0, 4), let mo = Self.digits(u, 5, 2), let d = Self.digits(u, 8, 2)
        else { return nil }
        if u.count == 10 {
            guard let v = Self.millis(y, mo, d, 0, 0, 0, 0) else { return nil }
            self.millis = v
            return
        }
        guard u.count >= 19, u[10] == 0x54 || u[10] == 0x20 || u[10] == 0x74, u[13] == 0x3A, u[16] == 0x3A,
            let h = Self.digits(u, 11, 2), let mi = Self.digits(u, 14, 2), let s = Self.digits(u, 17, 2)
        else { return nil }
        var i = 19
        var ms = 0
        if i < u.count, u[i] == 0x2E || u[i] == 0x2C {
            i += 1
            var n = 0
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 {
                if n < 3 { ms = ms * 10 + Int(u[i] - 0x30) }
                n += 1
                i += 1
            }
            guard n > 0 else { return nil }
            for _ in n..<max(n, 3) { ms *= 10 }
        }
        var offsetMinutes = 0
        if i < u.count {
            if u[i] == 0x5A || u[i] == 0x7A {
                i += 1
            } else if u[i] == 0x2B || u[i] == 0x2D {
                let sign = u[i] == 0x2D ? -1 : 1
                i += 1
                guard let oh = Self.digits(u, i, 2) else { return nil }
                i += 2
                if i < u.count, u[i] == 0x3A { i += 1 }
                var om = 0
                if i < u.count {
                    guard let v = Self.digits(u, i, 2) else { return nil }
                    om = v
                    i += 2
                }
                guard oh <= 23, om <= 59 else { return nil }
                offsetMinutes = sign * (oh * 60 + om)
            } else {
                return nil
            }
        }
        guard i == u.count, let v = Self.millis(y, mo, d, h, mi, s, ms) else { return nil }
        self.millis = v - Int64(offsetMinutes) * 60_000
    }

    // MARK: - Calendar arithmetic (proleptic Gregorian, Howard Hinnant's algorithms)

    static func millis(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int, _ ms: Int) -> Int64? {
        guard (1...12).contains(mo), d >= 1, d <= daysInMonth(y, mo), h <= 23, mi <= 59, s <= 60, ms <= 999
        else { return nil }
        let days = daysFromCivil(y, mo, d)
        // A leap second (:60) is folded into the next second.
        return days * 86_400_000 + Int64(h * 3_600_000 + mi * 60_000 + s * 1000 + ms)
    }

    static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146_097 + doe - 719_468)
    }

    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    private static func digits(_ u: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= u.count else { return nil }
        var v = 0
        for i in start..<(start + count) {
            let c = u[i]
            guard c >= 0x30, c <= 0x39 else { return nil }
            v = v * 10 + Int(c - 0x30)
        }
        return v
    }

    private static func pad<T: BinaryInteger>(_ out: inout String, _ value: T, _ width: Int) {
        let s = String(value)
        if s.count < width { out += String(repeating: "0", count: width - s.count) }
        out += s
    }
}
