/// One checksum-verified NMEA 0183 sentence split into fields, e.g.
/// `$GPRMC,…*6E` → talker `GP`, type `RMC`, fields after the address.
struct NMEASentence: Sendable, Hashable {
    /// The talker id (`GP`, `GN`, `IN`, …); empty for proprietary `$P…` sentences.
    var talker: Substring
    /// The sentence type (`GGA`, `RMC`, …).
    var type: Substring
    /// The fields after the address field; `fields[0]` is the first data field.
    var fields: [Substring]

    /// Why a line is not a usable sentence.
    enum Problem: Error, Equatable {
        case noChecksum
        case badChecksum(expected: UInt8, found: String)
        case malformed(String)
    }

    /// The longest sentence accepted: the standard says 82 characters, some
    /// receivers emit longer proprietary ones.
    static let maxLength = 200

    /// Parses `$…*hh` (the bytes from `$` to the end of the line, trailing
    /// whitespace already removed) and verifies its checksum.
    static func parse(_ bytes: ArraySlice<UInt8>) -> Result<NMEASentence, Problem> {
        guard bytes.count <= maxLength else { return .failure(.malformed("sentence longer than \(maxLength) characters")) }
        guard let first = bytes.first, first == UInt8(ascii: "$") || first == UInt8(ascii: "!") else {
            return .failure(.malformed("does not start with $"))
        }
        guard let star = bytes.lastIndex(of: UInt8(ascii: "*")) else { return .failure(.noChecksum) }
        let body = bytes[(bytes.startIndex + 1)..<star]
        let tail = bytes[(star + 1)...]
        var sum: UInt8 = 0
        for b in body {
            guard b >= 0x20, b < 0x7F else { return .failure(.malformed("contains a non-printable byte 0x\(hex(b))")) }
            sum ^= b
        }
        guard tail.count == 2, let hi = hexValue(tail[tail.startIndex]), let lo = hexValue(tail[tail.startIndex + 1]) else {
            let shown = String(decoding: tail.prefix(4), as: UTF8.self)
            return .failure(.badChecksum(expected: sum, found: shown))
        }
        guard hi << 4 | lo == sum else {
            return .failure(.badChecksum(expected: sum, found: String(decoding: tail, as: UTF8.self)))
        }
        let text = String(decoding: body, as: UTF8.self)
        var parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let address = parts.removeFirst()
        guard address.count >= 3, address.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }) else {
            return .failure(.malformed("bad address field \"\(address.prefix(10))\""))
        }
        if address.first == "P" {
            return .success(NMEASentence(talker: "", type: address, fields: parts))
        }
        guard address.count == 5 else { return .failure(.malformed("bad address field \"\(address)\"")) }
        return .success(NMEASentence(talker: address.prefix(2), type: address.suffix(3), fields: parts))
    }

    /// Field `i` (0-based after the address), nil when absent or empty.
    func field(_ i: Int) -> Substring? {
        guard i < fields.count, !fields[i].isEmpty else { return nil }
        return fields[i]
    }

    /// Time of day `hhmmss[.sss]` in milliseconds, nil when absent or invalid.
    func timeOfDay(_ i: Int) -> Int? {
        guard let f = field(i), f.count >= 6 else { return nil }
        let u = Array(f.utf8)
        func two(_ k: Int) -> Int? {
            guard u[k] >= 0x30, u[k] <= 0x39, u[k + 1] >= 0x30, u[k + 1] <= 0x39 else { return nil }
            return Int(u[k] - 0x30) * 10 + Int(u[k + 1] - 0x30)
        }
        guard let h = two(0), let m = two(2), let s = two(4), h < 24, m < 60, s <= 60 else { return nil }
        var ms = 0
        if u.count > 6 {
            guard u[6] == UInt8(ascii: "."), u.count > 7 else { return nil }
            var scale = 100
            for b in u[7...] {
                guard b >= 0x30, b <= 0x39 else { return nil }
                ms += Int(b - 0x30) * scale
                scale /= 10
            }
        }
        return ((h * 60 + m) * 60 + s) * 1000 + ms
    }

    /// A `ddmmyy` date as (year, month, day); two-digit years 80–99 are 19xx, the rest 20xx.
    func date(_ i: Int) -> (Int, Int, Int)? {
        guard let f = field(i), f.count == 6, f.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let u = Array(f.utf8).map { Int($0 - 0x30) }
        let d = u[0] * 10 + u[1]
        let m = u[2] * 10 + u[3]
        let yy = u[4] * 10 + u[5]
        return (yy >= 80 ? 1900 + yy : 2000 + yy, m, d)
    }

    /// A coordinate `(d)ddmm.mmmm` with its hemisphere field, in signed degrees;
    /// nil when absent, malformed or out of range.
    func coordinate(_ i: Int, hemisphere h: Int, isLatitude: Bool) -> Double? {
        guard let raw = FixValues.number(field(i)), raw >= 0, let hemi = field(h) else { return nil }
        let degrees = (raw / 100).rounded(.down)
        let minutes = raw - degrees * 100
        guard minutes < 60 else { return nil }
        var v = degrees + minutes / 60
        switch (hemi, isLatitude) {
        case ("N", true), ("E", false): break
        case ("S", true), ("W", false): v = -v
        default: return nil
        }
        guard abs(v) <= (isLatitude ? 90 : 180) else { return nil }
        return v
    }

    /// A finite number in field `i`, nil when absent or not a number.
    func number(_ i: Int) -> Double? { FixValues.number(field(i)) }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }
}
