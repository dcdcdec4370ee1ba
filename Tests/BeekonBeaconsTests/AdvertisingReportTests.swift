import Foundation
import Testing
@testable import BeekonBeacons

/// HCI LE advertising report decoding and btsnoop captures (SPEC BY-5).
@Suite struct AdvertisingReportTests {
    @Test("BY-5: an LE Advertising Report around the ruuvitag-sensor README's data decodes: address, RSSI, Eddystone-URL")
    func ruuviEvent() throws {
        let event = Examples.ruuviEvent
        let reports = try #require(try AdvertisingReport.parse(hciEvent: event))
        #expect(reports.count == 1)
        let r = reports[0]
        #expect(r.addressText == "1F:A5:74:89:16:57")
        #expect(r.eventType == 3 && r.addressType == 1 && r.rssi == -61)
        #expect(try BeaconFrame.parse(advertisingData: r.data) == .eddystoneURL(url: "https://ruu.vi/#AjUX1MAw0", txPowerAt0m: -7))
    }

    @Test("BY-5: RSSI 127 means unavailable in legacy and extended reports; extended reports carry TX power")
    func unavailableRSSI() throws {
        let legacy = try #require(try AdvertisingReport.parse(hciEvent: Examples.legacyReport(data: Examples.iBeacon, rssi: 127)))
        #expect(legacy[0].rssi == nil)
        #expect(try BeaconReading.from(report: legacy[0], scanner: "s", time: Date(timeIntervalSince1970: 0)) == nil)
        let ext = try #require(
            try AdvertisingReport.parse(hciEvent: Examples.extendedReport(data: Examples.altBeacon, rssi: -70, txPower: 127)))
        #expect(ext[0].rssi == -70 && ext[0].txPower == nil && ext[0].eventType == 0x10)
        #expect(ext[0].addressText == "11:22:33:44:55:66")
        let reading = try #require(try BeaconReading.from(report: ext[0], scanner: "s", time: Date(timeIntervalSince1970: 0)))
        #expect(reading.rssi == -70 && reading.measuredPower == -59 && reading.identity.minor == 2)
        let ext2 = try #require(try AdvertisingReport.parse(hciEvent: Examples.extendedReport(data: [], rssi: 127, txPower: -4)))
        #expect(ext2[0].rssi == nil && ext2[0].txPower == -4)
    }

    @Test("BY-5: other events are not reports; bad reports give one-line errors")
    func otherAndBadEvents() throws {
        #expect(try AdvertisingReport.parse(hciEvent: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]) == nil)
        #expect(try AdvertisingReport.parse(hciEvent: [0x3E, 0x02, 0x01, 0x00]) == nil)
        #expect(throws: BeaconParseError.invalid(what: "LE Advertising Report", detail: "0 reports (1–25 allowed)")) {
            try AdvertisingReport.parse(hciEvent: [0x3E, 0x02, 0x02, 0x00])
        }
        var short = Examples.legacyReport(data: Examples.iBeacon, rssi: -50)
        short.removeLast(3)
        #expect(throws: BeaconParseError.self) { try AdvertisingReport.parse(hciEvent: short) }
    }

    @Test("BY-5: btsnoop datalinks 1001, 1002 and 2001 around the example bytes give the same readings with record times")
    func btsnoopDatalinks() throws {
        let events = [
            Examples.legacyReport(data: Examples.iBeacon, rssi: -65), Examples.ruuviEvent,
            Examples.extendedReport(data: Examples.altBeaconPadded, rssi: -80, txPower: 0),
        ]
        for datalink: UInt32 in [1001, 1002, 2001] {
            let result = BtsnoopReader.read(Examples.btsnoop(datalink: datalink, events: events), scanner: "pi")
            #expect(result.errorCount == 0, "\(datalink): \(result.messages)")
            #expect(result.readings.map(\.rssi) == [-65, -80], "\(datalink)")
            #expect(result.readings.map(\.identity.minor) == [2, 2])
            #expect(result.readings.map(\.scanner) == ["pi", "pi"])
            #expect(result.readings.first?.time == Date(timeIntervalSince1970: 1_425_417_361))
            #expect(result.skipped == 2, "\(datalink): the command and the URL frame")
        }
        let second = BtsnoopReader.read(Examples.btsnoop(datalink: 2001, events: events, index: 1), scanner: "pi")
        #expect(second.readings.first?.scanner == "pi/hci1")
    }

    @Test("BY-5: a truncated or foreign btsnoop file is a counted error, the readings before the cut are kept")
    func badBtsnoop() throws {
        var data = Examples.btsnoop(
            datalink: 1002,
            events: [
                Examples.legacyReport(data: Examples.iBeacon, rssi: -65),
                Examples.legacyReport(data: Examples.iBeacon, rssi: -66),
            ])
        data.removeLast(5)
        let cut = BtsnoopReader.read(data)
        #expect(cut.readings.map(\.rssi) == [-65])
        #expect(cut.errorCount == 1 && cut.messages.first?.hasPrefix("record 3: btsnoop record") == true)
        let foreign = BeaconRecording.read(Data("btsnoop\0".utf8) + Examples.be32(1) + Examples.be32(1003))
        #expect(foreign.messages == ["byte 12: unsupported btsnoop datalink 1003"])
    }

    @Test(
        "BY-5: HCI monitor channel frames (as read from the socket) decode to readings of scanner hci<index>; bad frames are one-line errors"
    )
    func monitorFrames() throws {
        let event = Examples.legacyReport(data: Examples.iBeacon, rssi: -70)
        let bytes: [UInt8] = [0x03, 0x00, 0x01, 0x00, UInt8(event.count), 0x00] + event
        let frame = try HCIMonitorFrame.parse(bytes)
        #expect(frame.opcode == 3 && frame.index == 1)
        let readings = try frame.readings(at: Date(timeIntervalSince1970: 5))
        #expect(readings.map(\.scanner) == ["hci1"] && readings.map(\.rssi) == [-70])
        let command = try HCIMonitorFrame.parse([0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x0C, 0x20, 0x00])
        #expect(try command.readings(at: Date(timeIntervalSince1970: 5)).isEmpty)
        #expect(throws: BeaconParseError.truncated(what: "HCI monitor frame", offset: 6, needed: 5, available: 1)) {
            try HCIMonitorFrame.parse([0x03, 0x00, 0x00, 0x00, 0x05, 0x00, 0x3E])
        }
        #expect(throws: BeaconParseError.invalid(what: "HCI monitor frame", detail: "1 bytes after the 0-byte payload")) {
            try HCIMonitorFrame.parse([0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3E])
        }
    }
}
