/// One length–type–value structure of Bluetooth LE advertising data
/// (Core Specification Vol 3 Part C §11): `length` covers the type byte and the value.
public struct ADStructure: Sendable, Equatable {
    /// The AD type (0x01 flags, 0x03 16-bit service UUIDs, 0x16 service data, 0xFF manufacturer data, …).
    public var type: UInt8
    /// The value bytes after the type.
    public var value: [UInt8]

    /// Creates a structure.
    public init(type: UInt8, value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// AD type of manufacturer-specific data.
    public static let manufacturerData: UInt8 = 0xFF
    /// AD type of 16-bit-UUID service data.
    public static let serviceData16: UInt8 = 0x16

    /// Walks advertising (or scan-response) data into its structures. A zero length ends
    /// the data (Android scan records are zero-padded to 62 bytes); a structure that runs
    /// past the end is an error.
    public static func walk(_ data: [UInt8]) throws(BeaconParseError) -> [ADStructure] {
        var cursor = ByteCursor(data, what: "advertising data")
        var out: [ADStructure] = []
        while cursor.remaining > 0 {
            let length = Int(try cursor.u8())
            if length == 0 { break }
            let body = try cursor.take(length)
            out.append(ADStructure(type: body[body.startIndex], value: Array(body.dropFirst())))
        }
        return out
    }
}
