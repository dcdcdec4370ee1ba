import Foundation

/// One frame of the Linux kernel's HCI monitor channel (`HCI_CHANNEL_MONITOR`, what `btmon`
/// reads): a little-endian header of opcode, controller index and payload length, then the
/// payload (SPEC BY-5). Opcode 3 carries an HCI event packet (no H4 type byte).
public struct HCIMonitorFrame: Sendable, Equatable {
    /// The monitor opcode (0 new index, 1 delete index, 2 command, 3 event, 4/5 ACL, …).
    public var opcode: UInt16
    /// The controller index (`hci0` is 0).
    public var index: UInt16
    /// The payload.
    public var payload: [UInt8]

    /// The opcode of an HCI event packet.
    public static let eventOpcode: UInt16 = 3

    /// Decodes one frame as a `read(2)` on the monitor socket returns it.
    public static func parse(_ bytes: [UInt8]) throws(BeaconParseError) -> HCIMonitorFrame {
        var c = ByteCursor(bytes, what: "HCI monitor frame")
        let opcode = try c.u16le()
        let index = try c.u16le()
        let length = Int(try c.u16le())
        let payload = Array(try c.take(length))
        guard c.remaining == 0 else {
            throw .invalid(what: "HCI monitor frame", detail: "\(c.remaining) bytes after the \(length)-byte payload")
        }
        return HCIMonitorFrame(opcode: opcode, index: index, payload: payload)
    }

    /// The beacon readings of this frame, heard at `time` by scanner `hci<index>`; empty for
    /// frames other than LE advertising report events.
    public func readings(at time: Date) throws(BeaconParseError) -> [BeaconReading] {
        guard opcode == Self.eventOpcode, let reports = try AdvertisingReport.parse(hciEvent: payload) else { return [] }
        var out: [BeaconReading] = []
        for report in reports {
            if let reading = try BeaconReading.from(report: report, scanner: "hci\(index)", time: time) { out.append(reading) }
        }
        return out
    }
}
