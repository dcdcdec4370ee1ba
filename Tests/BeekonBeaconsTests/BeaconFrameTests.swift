import Foundation
import Testing
@testable import BeekonBeacons

/// Frame decoding from the published layouts and public example bytes (SPEC BY-5).
@Suite struct BeaconFrameTests {
    @Test("BY-5: the AltBeacon library's AltBeacon example decodes to its ids, reference RSSI and reserved byte")
    func altBeaconExample() throws {
        let frame = try #require(try BeaconFrame.parse(advertisingData: Examples.altBeacon))
        guard case let .altBeacon(identity, beaconID, rssi, manufacturer, reserved) = frame else {
            Issue.record("not an AltBeacon: \(frame)")
            return
        }
        #expect(identity.uuid == "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")
        #expect(identity.major == 1 && identity.minor == 2)
        #expect(beaconID.count == 20)
        #expect(rssi == -59 && frame.measuredPowerAt1m == -59)
        #expect(manufacturer == 0x0118 && reserved == 0x09)
        #expect(throws: BeaconParseError.truncated(what: "advertising data", offset: 31, needed: 9, available: 0)) {
            try BeaconFrame.parse(advertisingData: Examples.altBeaconLibrary)
        }
    }

    @Test("BY-5: a zero length ends the data — the zero-padded Android scan record decodes the same beacon")
    func zeroLengthStopsWalk() throws {
        let structures = try ADStructure.walk(Examples.altBeaconPadded + [UInt8](repeating: 0, count: 20))
        #expect(structures.map(\.type) == [0x01, 0xFF])
        let frame = try #require(try BeaconFrame.parse(advertisingData: Examples.altBeaconPadded))
        #expect(frame.identity?.description == "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6/1/2")
        guard case let .altBeacon(_, _, rssi, _, reserved) = frame else {
            Issue.record("\(frame)")
            return
        }
        #expect(rssi == -59 && reserved == nil, "the reserved byte is optional, as in the library")
    }

    @Test("BY-5: iBeacon — Apple company id, type 0x02 0x15, UUID, big-endian major/minor, power at 1 m")
    func iBeacon() throws {
        let frame = try #require(try BeaconFrame.parse(advertisingData: Examples.iBeacon))
        #expect(
            frame
                == .iBeacon(
                    identity: BeaconIdentity(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 2)!,
                    measuredPower: -59))
        #expect(frame.kind == "ibeacon")
    }

    @Test("BY-5: Eddystone-UID: namespace+instance as the identity, power at 0 m normalised to 1 m by −41 dB")
    func eddystoneUID() throws {
        // Service data FEAA, frame 0x00, TX −20 dBm at 0 m, namespace EDD1EBEAC04E5DEFA017, instance 0BDB87539B67, RFU.
        let data = Examples.hex("0201060303aafe1716aafe00ec edd1ebeac04e5defa017 0bdb87539b67 0000")
        let frame = try #require(try BeaconFrame.parse(advertisingData: data))
        #expect(frame.identity == BeaconIdentity(uuid: "EDD1EBEAC04E5DEFA0170BDB87539B67"))
        #expect(frame.measuredPowerAt1m == -20 - 41)
    }

    @Test("BY-5: Eddystone-URL expansion: scheme prefix and expansion codes")
    func eddystoneURL() throws {
        // https://www. + "google" + ".com/" — the example of the Eddystone-URL specification.
        let data = Examples.hex("0201060303aafe0d16aafe10ed01676f6f676c6500")
        let frame = try #require(try BeaconFrame.parse(advertisingData: data))
        #expect(frame == .eddystoneURL(url: "https://www.google.com/", txPowerAt0m: -19))
        #expect(frame.identity == nil && frame.measuredPowerAt1m == -60)
    }

    @Test("BY-5: Eddystone-TLM version 0 decodes battery, 8.8 temperature, counts; version 1 (encrypted) is reported unsupported")
    func eddystoneTLM() throws {
        let data = Examples.hex("0201060303aafe1116aafe20 00 0bb8 1480 000003e8 00002710")
        let frame = try #require(try BeaconFrame.parse(advertisingData: data))
        #expect(
            frame
                == .eddystoneTLM(
                    EddystoneTelemetry(
                        batteryMillivolts: 3000, temperature: 20.5,
                        advertisementCount: 1000, uptimeSeconds: 1000)))
        #expect(throws: BeaconParseError.unsupported(what: "Eddystone-TLM version 1 (encrypted)")) {
            try BeaconFrame.parse(advertisingData: Examples.encryptedTLM)
        }
    }

    @Test("BY-5: Eddystone-EID carries 8 bytes and its power")
    func eddystoneEID() throws {
        let data = Examples.hex("0201060303aafe0d16aafe30f0 0102030405060708")
        let frame = try #require(try BeaconFrame.parse(advertisingData: data))
        #expect(frame == .eddystoneEID(eid: [1, 2, 3, 4, 5, 6, 7, 8], txPowerAt0m: -16))
    }

    @Test("BY-5: malformed structures give one-line errors naming the frame; non-beacon data is nil")
    func malformed() throws {
        #expect(throws: BeaconParseError.truncated(what: "advertising data", offset: 4, needed: 26, available: 2)) {
            try ADStructure.walk(Examples.hex("0201061a ff4c"))
        }
        #expect(throws: BeaconParseError.truncated(what: "iBeacon", offset: 20, needed: 2, available: 1)) {
            try BeaconFrame.parse(advertisingData: Examples.hex("02010616ff4c000215e2c56db5dffb48d2b060d0f5a71096e000"))
        }
        #expect(throws: BeaconParseError.invalid(what: "Eddystone-URL", detail: "unknown scheme prefix 0x07")) {
            try BeaconFrame.parse(advertisingData: Examples.hex("0201060303aafe0716aafe10ed0761"))
        }
        #expect(try BeaconFrame.parse(advertisingData: Examples.hex("0201060a094d79204265616b6f6e")) == nil)
        let error = BeaconParseError.truncated(what: "iBeacon", offset: 20, needed: 2, available: 1)
        #expect(error.description == "iBeacon: truncated at byte 20 (needs 2, has 1)")
        #expect(!error.description.contains("\n"))
    }
}
