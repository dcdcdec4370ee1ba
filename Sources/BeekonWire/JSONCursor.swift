import Foundation

/// A strict, allocation-light JSON reader over a byte buffer that throws `GiveUp` at the
/// first thing the fast path does not handle.
struct JSONCursor {
    /// The fast path does not decide this body.
    struct GiveUp: Error {}

    let bytes: UnsafeRawBufferPointer
    var index = 0

    /// The deepest nesting an ignored value may have (the general path decides deeper ones).
    static let maxDepth = 32

    /// Skips JSON whitespace.
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// The next non-whitespace byte, not consumed.
    mutating func peek() throws(GiveUp) -> UInt8 {
        skipWhitespace()
        guard index < bytes.count else { throw GiveUp() }
        return bytes[index]
    }

    mutating func expect(_ byte: UInt8) throws(GiveUp) {
        guard try peek() == byte else { throw GiveUp() }
        index += 1
    }

    /// Only whitespace remains.
    mutating func end() throws(GiveUp) {
        skipWhitespace()
        guard index == bytes.count else { throw GiveUp() }
    }

    /// The members of an object, each handed to `member` with its key's bytes while the
    /// cursor stands before the value (which `member` must consume).
    mutating func object(_ member: (inout JSONCursor, UnsafeRawBufferPointer) throws(GiveUp) -> Void) throws(GiveUp) {
        try expect(0x7B)  // {
        if try peek() == 0x7D {
            index += 1
            return
        }
        while true {
            let key = try rawString()
            try expect(0x3A)  // :
            try member(&self, key)
            switch try peek() {
            case 0x2C: index += 1  // ,
            case 0x7D:  // }
                index += 1
                return
            default: throw GiveUp()
            }
        }
    }

    /// The elements of an array, each consumed by `element`.
    mutating func array(_ element: (inout JSONCursor) throws(GiveUp) -> Void) throws(GiveUp) {
        try expect(0x5B)  // [
        if try peek() == 0x5D {
            index += 1
            return
        }
        while true {
            try element(&self)
            switch try peek() {
            case 0x2C: index += 1
            case 0x5D:
                index += 1
                return
            default: throw GiveUp()
            }
        }
    }

    /// A string's bytes between its quotes; gives up on escapes and on control characters
    /// (which JSON forbids unescaped: the general path names the error).
    mutating func rawString() throws(GiveUp) -> UnsafeRawBufferPointer {
        try expect(0x22)
        let start = index
        while index < bytes.count {
            let b = bytes[index]
            if b == 0x22 {
                defer { index += 1 }
                return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            }
            if b == 0x5C || b < 0x20 { throw GiveUp() }
            index += 1
        }
        throw GiveUp()
    }

    /// A string value (valid UTF-8, else the general path decides).
    mutating func string() throws(GiveUp) -> String {
        let raw = try rawString()
        if !raw.contains(where: { $0 >= 0x80 }) { return String(decoding: raw, as: UTF8.self) }
        guard let text = ValidUTF8.string(raw) else { throw GiveUp() }
        return text
    }

    /// `true` or `false`.
    mutating func bool() throws(GiveUp) -> Bool {
        if try literal("true") { return true }
        if try literal("false") { return false }
        throw GiveUp()
    }

    private mutating func literal(_ word: StaticString) throws(GiveUp) -> Bool {
        skipWhitespace()
        let n = word.utf8CodeUnitCount
        guard index + n <= bytes.count,
            memcmp(bytes.baseAddress! + index, word.utf8Start, n) == 0
        else { return false }
        index += n
        return true
    }

    /// The extent of a number in strict JSON grammar, with what the fast conversion needs.
    private struct NumberToken {
        var start: Int
        var end: Int
        var negative = false
        /// The significant digits (leading zeros dropped), while they fit 15 digits.
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var exponent = 0
        var hasExponent = false
    }

    private mutating func numberToken() throws(GiveUp) -> NumberToken {
        skipWhitespace()
        var t = NumberToken(start: index, end: index)
        func digit(_ i: Int) -> UInt8? {
            guard i < bytes.count else { return nil }
            let b = bytes[i]
            return b >= 0x30 && b <= 0x39 ? b - 0x30 : nil
        }
        func take(_ d: UInt8, _ t: inout NumberToken) {
            if t.significantDigits > 0 || d != 0 {
                t.significantDigits += 1
                if t.significantDigits <= 15 { t.mantissa = t.mantissa * 10 + UInt64(d) }
            }
        }
        if index < bytes.count, bytes[index] == 0x2D {
            t.negative = true
            index += 1
        }
        guard let first = digit(index) else { throw GiveUp() }
        index += 1
        take(first, &t)
        if first != 0 {
            while let d = digit(index) {
                take(d, &t)
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == 0x2E {  // .
            index += 1
            guard digit(index) != nil else { throw GiveUp() }
            while let d = digit(index) {
                take(d, &t)
                t.fractionDigits += 1
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {  // e E
            index += 1
            t.hasExponent = true
            var negativeExponent = false
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D {
                negativeExponent = bytes[index] == 0x2D
                index += 1
            }
            guard digit(index) != nil else { throw GiveUp() }
            var e = 0
            while let d = digit(index) {
                // An exponent this long is left to the general path (kept whole, it could
                // meet an equally long fraction and pass for a small power of ten).
                guard e < 100_000 else { throw GiveUp() }
                e = e * 10 + Int(d)
                index += 1
            }
            t.exponent = negativeExponent ? -e : e
        }
        t.end = index
        return t
    }

    /// Exact powers of ten (every one up to 10^22 is a Double exactly).
    private static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { r, _ in r * 10 } }

    /// A finite number, rounded correctly: with at most 15 significant digits and a power of
    /// ten within 10^±22 it is one exact operation (Clinger's fast path); otherwise the
    /// standard library's correctly rounded conversion of the same text. Gives up where
    /// `JSONDecoder` is known to differ: a zero with an exponent (it refuses `0e5` and accepts
    /// `0e50`: its zero test looks at the last few bytes) and a non-zero number that
    /// underflows to zero (`1e-400`, which it refuses).
    mutating func double() throws(GiveUp) -> Double {
        let t = try numberToken()
        if t.hasExponent, t.significantDigits == 0 { throw GiveUp() }
        let scale = t.exponent - t.fractionDigits
        var value: Double
        if t.significantDigits <= 15, (-22...22).contains(scale) {
            value = Double(t.mantissa)
            value = scale < 0 ? value / Self.powersOfTen[-scale] : value * Self.powersOfTen[scale]
            if t.negative { value = -value }
        } else {
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[t.start..<t.end]), as: UTF8.self)
            guard let v = Double(text) else { throw GiveUp() }
            value = v
        }
        guard value.isFinite, value != 0 || t.significantDigits == 0 else { throw GiveUp() }
        return value
    }

    /// An integer written without fraction or exponent, at most 15 digits.
    mutating func int() throws(GiveUp) -> Int {
        let t = try numberToken()
        guard t.fractionDigits == 0, !t.hasExponent, t.significantDigits <= 15 else { throw GiveUp() }
        return t.negative ? -Int(t.mantissa) : Int(t.mantissa)
    }

    /// Consumes any JSON value (an ignored member), checking its grammar.
    mutating func skipValue(depth: Int = 0) throws(GiveUp) {
        guard depth < Self.maxDepth else { throw GiveUp() }
        switch try peek() {
        case 0x7B: try object { (c, _) throws(GiveUp) in try c.skipValue(depth: depth + 1) }
        case 0x5B: try array { (c) throws(GiveUp) in try c.skipValue(depth: depth + 1) }
        case 0x22: _ = try string()
        case 0x74, 0x66: _ = try bool()
        default: _ = try double()  // null gives up here too: the general path decides it
        }
    }
}
