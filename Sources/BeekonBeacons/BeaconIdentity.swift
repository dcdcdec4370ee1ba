/// Who a beacon is: a 16-byte identifier and, for iBeacon/AltBeacon, a major and a minor.
///
/// iBeacon: proximity UUID, major, minor. AltBeacon: the first 16 bytes of its 20-byte
/// beacon id, then two 16-bit ids (the usual id1/id2/id3 split). Eddystone-UID: the
/// 10-byte namespace followed by the 6-byte instance, written as one UUID, with no major/minor.
public struct BeaconIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The identifier as 32 upper-case hex digits in the 8-4-4-4-12 UUID form.
    public var uuid: String
    /// The major (iBeacon, AltBeacon id2); nil when the frame has none.
    public var major: Int?
    /// The minor (iBeacon, AltBeacon id3); nil when the frame has none.
    public var minor: Int?

    /// Creates an identity; `uuid` is normalised (dashes optional, any case).
    /// Returns nil unless `uuid` holds exactly 32 hex digits.
    public init?(uuid: String, major: Int? = nil, minor: Int? = nil) {
        guard let normal = Self.normalise(uuid) else { return nil }
        self.uuid = normal
        self.major = major
        self.minor = minor
    }

    init(bytes: ArraySlice<UInt8>, major: Int?, minor: Int?) {
        let hex = bytes.map { Self.hexDigits($0) }.joined()
        uuid = Self.normalise(hex) ?? hex
        self.major = major
        self.minor = minor
    }

    /// `UUID/major/minor` with absent parts left out.
    public var description: String {
        [uuid, major.map(String.init), minor.map(String.init)].compactMap { $0 }.joined(separator: "/")
    }

    /// 32 hex digits (dashes ignored) as upper-case 8-4-4-4-12, or nil.
    public static func normalise(_ text: String) -> String? {
        let hex = text.uppercased().filter { $0 != "-" }
        guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
        var out = ""
        for (i, c) in hex.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append("-") }
            out.append(c)
        }
        return out
    }

    static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
