/// One advertisement as a controller reports it in an HCI LE Advertising Report
/// (LE Meta subevent 0x02) or LE Extended Advertising Report (subevent 0x0D).
public struct AdvertisingReport: Sendable, Equatable {
    /// The event type (legacy: 0 ADV_IND … 4 SCAN_RSP; extended: the 16-bit property bits).
    public var eventType: UInt16
    /// The advertiser's address type (0 public, 1 random, …).
    public var addressType: UInt8
    /// The advertiser's address, most significant byte first (as printed: `AA:BB:…`).
    public var address: [UInt8]
    /// Received signal strength in dBm; nil when the controller reports 127 ("not available").
    public var rssi: Int?
    /// Transmit power from an extended report; nil when absent or 127.
    public var txPower: Int?
    /// The advertising (or scan response) data.
    public var data: [UInt8]

    /// Creates a report.
    public init(eventType: UInt16, addressType: UInt8, address: [UInt8], rssi: Int?, txPower: Int? = nil, data: [UInt8]) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    /// The address as `AA:BB:CC:DD:EE:FF`.
    public var addressText: String { address.map(BeaconIdentity.hexDigits).joined(separator: ":") }

    /// The RSSI/TX power value meaning "not available".
    static let unavailable: Int8 = 127

    /// Decodes an HCI event packet (event code, parameter length, parameters; no H4 type byte).
    /// Returns nil for events other than the two LE advertising reports; throws on malformed bytes.
    /// Reports are read one after another, each with all its fields, as BlueZ and real controllers lay them out.
    public static func parse(hciEvent packet: [UInt8]) throws(BeaconParseError) -> [AdvertisingReport]? {
        var c = ByteCursor(packet, what: "HCI event")
        let code = try c.u8()
        let length = Int(try c.u8())
        guard code == 0x3E else { return nil }
        guard c.remaining >= length else {
            throw .truncated(what: "HCI event", offset: 2, needed: length, available: c.remaining)
        }
        c = ByteCursor(packet, what: "LE Meta event", offset: 2, end: 2 + length)
        let subevent = try c.u8()
        switch subevent {
        case 0x02: return try legacyReports(&c)
        case 0x0D: return try extendedReports(&c)
        default: return nil
        }
    }

    private static func legacyReports(_ c: inout ByteCursor) throws(BeaconParseError) -> [AdvertisingReport] {
        let count = Int(try c.u8())
        guard (1...25).contains(count) else {
            throw .invalid(what: "LE Advertising Report", detail: "\(count) reports (1–25 allowed)")
        }
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let type = try c.u8()
            let addressType = try c.u8()
            let address = Array(try c.take(6).reversed())
            let length = Int(try c.u8())
            guard length <= 31 else {
                throw .invalid(what: "LE Advertising Report", detail: "data length \(length) (at most 31)")
            }
            let data = Array(try c.take(length))
            let rssi = try c.i8()
            reports.append(
                AdvertisingReport(
                    eventType: UInt16(type), addressType: addressType, address: address,
                    rssi: rssi == unavailable ? nil : Int(rssi), data: data))
        }
        return reports
    }

    private static func extendedReports(_ c: inout ByteCursor) throws(BeaconParseError) -> [AdvertisingReport] {
        let count = Int(try c.u8())
        guard (1...10).contains(count) else {
            throw .invalid(what: "LE Extended Advertising Report", detail: "\(count) reports (1–10 allowed)")
        }
        var reports: [AdvertisingReport] = []
        for _ in 0..<count {
            let type = try c.u16le()
            let addressType = try c.u8()
            let address = Array(try c.take(6).reversed())
            _ = try c.take(3)  // primary PHY, secondary PHY, advertising SID
            let tx = try c.i8()
            let rssi = try c.i8()
            _ = try c.take(9)  // periodic advertising interval, direct address type, direct address
            let length = Int(try c.u8())
            let data = Array(try c.take(length))
            reports.append(
                AdvertisingReport(
                    eventType: type, addressType: addressType, address: address,
                    rssi: rssi == unavailable ? nil : Int(rssi),
                    txPower: tx == unavailable ? nil : Int(tx), data: data))
        }
        return reports
    }
}
