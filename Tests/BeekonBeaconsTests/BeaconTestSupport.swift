import Foundation
@testable import BeekonBeacons

/// The real recordings kept in the repository: …/Tests/BeekonBeaconsTests/BeaconTestSupport.swift → ../Data.
enum BeaconData {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../Data/beacons")
        .standardizedFileURL

    static func url(_ name: String) -> URL { root.appendingPathComponent(name) }

    static let twoScanners = url("starksm64_two_scanners_2015-03-03.json.gz")
    static let fourScanners = url("starksm64_four_scanners_beacon5_run1_2015-03-13.json.gz")
    static let herald = url("herald_edison_20210312-1049-A.csv.gz")
}

/// Published example bytes (public facts, quoted in the tests that use them).
enum Examples {
    /// The AltBeacon example of the AltBeacon Android library's parser tests: flags, then
    /// manufacturer data 0x0118, code BEAC, id 2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6 / 1 / 2, ref RSSI −59, reserved 0x09.
    /// The library reads fixed offsets, and its bytes give the structure length 0x1A, one short of
    /// the reserved byte; an AD walker then reads that 0x09 as the next structure's length.
    static let altBeaconLibrary = hex("02011a1aff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509")
    /// The same advertisement with the length the AltBeacon specification gives (0x1B).
    static let altBeacon = hex("02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509")
    /// The same library's "missing data field" variant (no reserved byte), zero-padded like an Android scan record.
    static let altBeaconPadded = hex("02011a1aff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c5000000")
    /// An iBeacon with Apple's AirLocate UUID E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1, minor 2, power −59.
    static let iBeacon = hex("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")
    /// The advertising data of the ruuvitag-sensor README's example (a RuuviTag in Eddystone-URL mode):
    /// `https://ruu.vi/#AjUX1MAw0` at −7 dBm (0 m). (The README's event omits the data-length byte, so
    /// the tests wrap these 31 bytes in a well-formed report with its address and RSSI.)
    static let ruuviURL = hex("0201060303AAFE1716AAFE10F9037275752E76692F23416A5558314D417730")
    /// A whole LE Advertising Report event (no H4 byte) of that data: ADV_NONCONN_IND, random address 1F:A5:74:89:16:57, RSSI −61.
    static let ruuviEvent = [0x3E, 0x2B, 0x02, 0x01, 0x03, 0x01, 0x57, 0x16, 0x89, 0x74, 0xA5, 0x1F, 0x1F] + ruuviURL + [0xC3]
    /// An encrypted Eddystone-TLM (version 0x01): 12 bytes of ciphertext, salt and check.
    static let encryptedTLM = hex("0201060303aafe1516aafe2001 021203130414243405152535 0102 0304")

    /// Bytes from hex digits (spaces ignored).
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    /// An HCI LE Advertising Report event (no H4 byte) carrying `data` heard at `rssi` (127: unavailable).
    static func legacyReport(data: [UInt8], rssi: Int8, address: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]) -> [UInt8] {
        let params: [UInt8] =
            [0x02, 0x01, 0x00, 0x00] as [UInt8] + address.reversed() + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(params.count)] + params
    }

    /// An HCI LE Extended Advertising Report event carrying `data`.
    static func extendedReport(data: [UInt8], rssi: Int8, txPower: Int8) -> [UInt8] {
        var params: [UInt8] = [0x0D, 0x01, 0x10, 0x00, 0x00] + [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
        params += [0x01, 0x00, 0xFF, UInt8(bitPattern: txPower), UInt8(bitPattern: rssi)]
        params += [0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, UInt8(data.count)] + data
        return [0x3E, UInt8(params.count)] + params
    }

    /// A btsnoop file of `datalink` holding `events` (HCI event packets without the H4 byte),
    /// one second apart from 2015-03-03T21:16:00Z, with a command packet in front.
    static func btsnoop(datalink: UInt32, events: [[UInt8]], index: UInt16 = 0) -> Data {
        var out = Array("btsnoop\0".utf8) + be32(1) + be32(datalink)
        let start = Int64(1_425_417_360) * 1_000_000 + BtsnoopReader.unixEpochDelta
        let command: [UInt8] = [0x0C, 0x20, 0x02, 0x01, 0x00]  // LE Set Scan Enable
        var packets: [(flags: UInt32, bytes: [UInt8])] = []
        switch datalink {
        case 1002: packets.append((0, [0x01] + command))
        case 1001: packets.append((2, command))
        default: packets.append((UInt32(index) << 16 | 2, command))
        }
        for e in events {
            switch datalink {
            case 1002: packets.append((3, [0x04] + e))
            case 1001: packets.append((3, e))
            default: packets.append((UInt32(index) << 16 | 3, e))
            }
        }
        for (i, p) in packets.enumerated() {
            out += be32(UInt32(p.bytes.count)) + be32(UInt32(p.bytes.count)) + be32(p.flags) + be32(0)
            out += be64(UInt64(start + Int64(i) * 1_000_000)) + p.bytes
        }
        return Data(out)
    }

    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
    static func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }
}
