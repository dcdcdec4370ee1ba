import Foundation

/// Reads btsnoop captures (as `btmon -w` and Android's HCI snoop log write them) into
/// beacon readings (SPEC BY-5). Datalinks: 1001 (HCI, unencapsulated), 1002 (HCI UART/H4)
/// and 2001 (Linux monitor). Only LE advertising reports are decoded; other packets are skipped.
public enum BtsnoopReader {
    /// Microseconds between 0000-01-01 (the btsnoop epoch) and 1970-01-01.
    static let unixEpochDelta: Int64 = 0x00DC_DDB3_0F2F_8000
    static let magic: [UInt8] = Array("btsnoop\0".utf8)

    /// Decodes a whole capture. `scanner` names the receiver; for datalink 2001 with more
    /// than one controller, the controller index is appended (`name/hci1`).
    public static func read(_ data: Data, scanner: String = "btsnoop") -> BeaconReadResult {
        var result = BeaconReadResult()
        let bytes = [UInt8](data)
        var c = ByteCursor(bytes, what: "btsnoop header")
        let datalink: UInt32
        do {
            guard Array(try c.take(8)) == magic else {
                result.record(.invalid(what: "btsnoop header", detail: "not a btsnoop file (bad magic)"), at: "byte 0")
                return result
            }
            let version = try c.u32be()
            datalink = try c.u32be()
            guard version == 1 else {
                result.record(.invalid(what: "btsnoop header", detail: "version \(version) (expected 1)"), at: "byte 8")
                return result
            }
            guard [1001, 1002, 2001].contains(datalink) else {
                result.record(.unsupported(what: "btsnoop datalink \(datalink)"), at: "byte 12")
                return result
            }
        } catch {
            result.record(error, at: "header")
            return result
        }
        c = ByteCursor(bytes, what: "btsnoop record", offset: c.offset)
        var index = 0
        while c.remaining > 0 {
            index += 1
            do {
                var header = ByteCursor(bytes, what: "btsnoop record header", offset: c.offset)
                _ = try header.u32be()
                let included = Int(try header.u32be())
                let flags = try header.u32be()
                _ = try header.u32be()
                let stamp = Int64(bitPattern: try header.u64be())
                _ = try c.take(24)
                let packet = Array(try c.take(included))
                let time = Date(timeIntervalSince1970: Double(stamp &- unixEpochDelta) / 1_000_000)
                guard let event = eventPacket(packet, flags: flags, datalink: datalink) else {
                    result.skipped += 1
                    continue
                }
                let name = datalink == 2001 && flags >> 16 != 0 ? "\(scanner)/hci\(flags >> 16)" : scanner
                try decode(event: event, scanner: name, time: time, into: &result)
            } catch {
                result.record(error, at: "record \(index)")
                if case .truncated(let what, _, _, _) = error, what.hasPrefix("btsnoop") { break }
            }
        }
        return result
    }

    /// The HCI event packet (code, length, parameters) inside a record, or nil for other packets.
    static func eventPacket(_ packet: [UInt8], flags: UInt32, datalink: UInt32) -> [UInt8]? {
        switch datalink {
        case 1002: return packet.first == 0x04 ? Array(packet.dropFirst()) : nil
        case 1001: return flags & 0x03 == 0x03 ? packet : nil
        default: return flags & 0xFFFF == 0x0003 ? packet : nil
        }
    }

    /// Decodes one HCI event into readings, counting non-beacon reports as skipped.
    static func decode(event: [UInt8], scanner: String, time: Date, into result: inout BeaconReadResult) throws(BeaconParseError) {
        guard let reports = try AdvertisingReport.parse(hciEvent: event) else {
            result.skipped += 1
            return
        }
        for report in reports {
            if let reading = try BeaconReading.from(report: report, scanner: scanner, time: time) {
                result.readings.append(reading)
            } else {
                result.skipped += 1
            }
        }
    }
}
