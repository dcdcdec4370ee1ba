/// Why bytes could not be decoded as a beacon frame, an HCI report or a recording
/// (SPEC BY-5). Every case reads as one line; readers count them instead of stopping.
public enum BeaconParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes end before a field of `needed` bytes at `offset`.
    case truncated(what: String, offset: Int, needed: Int, available: Int)
    /// A field holds a value its layout does not allow.
    case invalid(what: String, detail: String)
    /// Well-formed bytes that are not a frame this module decodes (skipped, not an error).
    case unsupported(what: String)

    /// The one-line description.
    public var description: String {
        switch self {
        case let .truncated(what, offset, needed, available):
            return "\(what): truncated at byte \(offset) (needs \(needed), has \(available))"
        case let .invalid(what, detail):
            return "\(what): \(detail)"
        case let .unsupported(what):
            return "unsupported \(what)"
        }
    }

    /// A short stable key for counting errors by kind.
    public var kind: String {
        switch self {
        case let .truncated(what, _, _, _): return "truncated \(what)"
        case let .invalid(what, _): return "invalid \(what)"
        case let .unsupported(what): return "unsupported \(what)"
        }
    }
}

/// A bounds-checked little/big-endian reader over a byte buffer: every read either
/// returns a value or throws ``BeaconParseError/truncated(what:offset:needed:available:)``.
struct ByteCursor {
    let bytes: [UInt8]
    let what: String
    private(set) var offset: Int
    let end: Int

    init(_ bytes: [UInt8], what: String, offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.what = what
        self.offset = offset
        self.end = min(end ?? bytes.count, bytes.count)
    }

    var remaining: Int { max(0, end - offset) }

    mutating func take(_ count: Int) throws(BeaconParseError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else {
            throw .truncated(what: what, offset: offset, needed: count, available: remaining)
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() throws(BeaconParseError) -> UInt8 { try take(1).first! }

    mutating func i8() throws(BeaconParseError) -> Int8 { Int8(bitPattern: try u8()) }

    mutating func u16le() throws(BeaconParseError) -> UInt16 {
        let s = try take(2)
        return UInt16(s[s.startIndex]) | UInt16(s[s.startIndex + 1]) << 8
    }

    mutating func u16be() throws(BeaconParseError) -> UInt16 {
        let s = try take(2)
        return UInt16(s[s.startIndex]) << 8 | UInt16(s[s.startIndex + 1])
    }

    mutating func u32be() throws(BeaconParseError) -> UInt32 {
        let s = try take(4)
        return s.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func u64be() throws(BeaconParseError) -> UInt64 {
        let s = try take(8)
        return s.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
