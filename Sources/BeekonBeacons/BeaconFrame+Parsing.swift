extension BeaconFrame {
    /// Apple's Bluetooth company identifier.
    public static let appleCompanyID: UInt16 = 0x004C
    /// The Eddystone 16-bit service UUID.
    public static let eddystoneService: UInt16 = 0xFEAA

    /// Decodes the first beacon frame in advertising data: nil when the data holds no
    /// iBeacon/AltBeacon/Eddystone structure; an error when the data or such a structure is malformed.
    public static func parse(advertisingData data: [UInt8]) throws(BeaconParseError) -> BeaconFrame? {
        for structure in try ADStructure.walk(data) {
            if let frame = try parse(structure) { return frame }
        }
        return nil
    }

    /// Decodes one AD structure: nil when it is not a beacon payload.
    public static func parse(_ structure: ADStructure) throws(BeaconParseError) -> BeaconFrame? {
        switch structure.type {
        case ADStructure.manufacturerData: return try parseManufacturer(structure.value)
        case ADStructure.serviceData16: return try parseServiceData(structure.value)
        default: return nil
        }
    }

    private static func parseManufacturer(_ value: [UInt8]) throws(BeaconParseError) -> BeaconFrame? {
        guard value.count >= 4 else { return nil }
        let company = UInt16(value[0]) | UInt16(value[1]) << 8
        if company == appleCompanyID, value[2] == 0x02, value[3] == 0x15 {
            var c = ByteCursor(value, what: "iBeacon", offset: 4)
            let uuid = try c.take(16)
            let major = Int(try c.u16be())
            let minor = Int(try c.u16be())
            let power = Int(try c.i8())
            return .iBeacon(identity: BeaconIdentity(bytes: uuid, major: major, minor: minor), measuredPower: power)
        }
        if value[2] == 0xBE, value[3] == 0xAC {
            var c = ByteCursor(value, what: "AltBeacon", offset: 4)
            let id = Array(try c.take(20))
            let rssi = Int(try c.i8())
            let reserved = c.remaining > 0 ? try c.u8() : nil
            let major = Int(id[16]) << 8 | Int(id[17])
            let minor = Int(id[18]) << 8 | Int(id[19])
            let identity = BeaconIdentity(bytes: id[0..<16], major: major, minor: minor)
            return .altBeacon(identity: identity, beaconID: id, referenceRSSI: rssi, manufacturer: company, reserved: reserved)
        }
        return nil
    }

    private static func parseServiceData(_ value: [UInt8]) throws(BeaconParseError) -> BeaconFrame? {
        guard value.count >= 2, UInt16(value[0]) | UInt16(value[1]) << 8 == eddystoneService else { return nil }
        var c = ByteCursor(value, what: "Eddystone", offset: 2)
        let frameType = try c.u8()
        switch frameType {
        case 0x00:
            c = ByteCursor(value, what: "Eddystone-UID", offset: 3)
            let power = Int(try c.i8())
            let id = try c.take(16)
            return .eddystoneUID(identity: BeaconIdentity(bytes: id, major: nil, minor: nil), txPowerAt0m: power)
        case 0x10:
            c = ByteCursor(value, what: "Eddystone-URL", offset: 3)
            let power = Int(try c.i8())
            let scheme = try c.u8()
            let rest = Array(try c.take(c.remaining))
            return .eddystoneURL(url: try EddystoneURLCodec.expand(scheme: scheme, encoded: rest), txPowerAt0m: power)
        case 0x20:
            c = ByteCursor(value, what: "Eddystone-TLM", offset: 3)
            let version = try c.u8()
            guard version == 0 else { throw .unsupported(what: "Eddystone-TLM version \(version) (encrypted)") }
            let volts = Int(try c.u16be())
            let rawTemp = Int16(bitPattern: try c.u16be())
            let count = try c.u32be()
            let tenths = try c.u32be()
            let temperature: Double? = rawTemp == Int16(bitPattern: 0x8000) ? nil : Double(rawTemp) / 256
            return .eddystoneTLM(
                EddystoneTelemetry(
                    batteryMillivolts: volts, temperature: temperature,
                    advertisementCount: count, uptimeSeconds: Double(tenths) / 10))
        case 0x30:
            c = ByteCursor(value, what: "Eddystone-EID", offset: 3)
            let power = Int(try c.i8())
            return .eddystoneEID(eid: Array(try c.take(8)), txPowerAt0m: power)
        default:
            throw .unsupported(what: "Eddystone frame type 0x\(BeaconIdentity.hexDigits(frameType))")
        }
    }
}

/// The Eddystone-URL compression (scheme prefixes and expansion codes).
enum EddystoneURLCodec {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    static func expand(scheme: UInt8, encoded: [UInt8]) throws(BeaconParseError) -> String {
        guard Int(scheme) < schemes.count else {
            throw .invalid(what: "Eddystone-URL", detail: "unknown scheme prefix 0x\(BeaconIdentity.hexDigits(scheme))")
        }
        guard encoded.count <= 17 else {
            throw .invalid(what: "Eddystone-URL", detail: "encoded URL of \(encoded.count) bytes (at most 17)")
        }
        var url = schemes[Int(scheme)]
        for byte in encoded {
            if Int(byte) < expansions.count {
                url += expansions[Int(byte)]
            } else if byte > 0x20 && byte < 0x7F {
                url.append(Character(Unicode.Scalar(byte)))
            } else {
                throw .invalid(what: "Eddystone-URL", detail: "reserved byte 0x\(BeaconIdentity.hexDigits(byte)) in URL")
            }
        }
        return url
    }
}
