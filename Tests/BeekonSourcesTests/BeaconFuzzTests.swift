import BeekonGzip
import BeekonTestSupport
import Foundation
import Testing
import Beekon
@testable import BeekonBeacons
import BeekonTesting

/// Seeded, bounded fuzzing of the beacon decoders (SPEC BY-5), with the knobs and tally of
/// the track-reader fuzzers (`BEEKON_FUZZ_SCALE`, `BEEKON_FUZZ_SEED`, `BEEKON_FUZZ_REPORT`):
/// random and mutated frames, HCI events and whole recordings. Nothing may crash, every
/// error is one line, and whatever decodes is sane.
@Suite("BeaconFuzzTests", .tags(.fuzz), .skippable(.fuzz))
struct BeaconFuzzTests {
    /// Real advertising data: AltBeacon (spec length), iBeacon, Eddystone UID/URL/TLM/EID.
    static let frames: [[UInt8]] = [
        "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509",
        "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
        "0201060303aafe1716aafe00ecedd1ebeac04e5defa0170bdb87539b670000",
        "0201060303AAFE1716AAFE10F9037275752E76692F23416A5558314D417730",
        "0201060303aafe1116aafe20000bb81480000003e800002710",
        "0201060303aafe0d16aafe30f00102030405060708",
    ].map(hex)

    static func hex(_ text: String) -> [UInt8] {
        let d = Array(text)
        return stride(from: 0, to: d.count - 1, by: 2).map { UInt8(String(d[$0...$0 + 1]), radix: 16)! }
    }

    static func mutate(_ bytes: [UInt8], _ rng: inout SeededRandom) -> [UInt8] {
        var b = bytes
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            let i = b.isEmpty ? 0 : Int.random(in: 0..<b.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !b.isEmpty: b[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: b.insert(UInt8.random(in: 0...255, using: &rng), at: i)
            case 2 where !b.isEmpty: b.remove(at: i)
            default: b = Array(b.prefix(i))
            }
        }
        return b
    }

    static func oneLine(_ text: String) -> [String] {
        text.isEmpty || text.contains(where: \.isNewline) ? ["message is not one line: \(text.debugDescription)"] : []
    }

    static func sane(_ frame: BeaconFrame?) -> [String] {
        guard let frame else { return [] }
        var problems: [String] = []
        if let p = frame.measuredPowerAt1m, !(-128 - 41...127).contains(p) { problems.append("power \(p)") }
        if let id = frame.identity, BeaconIdentity.normalise(id.uuid) != id.uuid { problems.append("identity \(id)") }
        return problems
    }

    @Test("random and mutated advertising data: no crash, one-line errors, sane frames")
    func frames() async {
        await OffPoolExecutor.run("beacon fuzz: frames") {
            var tally = FuzzTally("beacons: frames")
            for i in 0..<1_000 * Fuzz.scale {
                var rng = Fuzz.rng(0xBEAC, i)
                let data =
                    i % 2 == 0
                    ? (0..<Int.random(in: 0...62, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    : Self.mutate(Self.frames[i / 2 % Self.frames.count], &rng)
                do throws(BeaconParseError) {
                    tally.input("#\(i) \(data)", Self.sane(try BeaconFrame.parse(advertisingData: data)))
                } catch {
                    tally.input("#\(i) \(data)", Self.oneLine(error.description))
                }
            }
            tally.finish()
        }
    }

    @Test("random and mutated HCI LE advertising report events: no crash, one-line errors, RSSI in range")
    func hciEvents() async {
        await OffPoolExecutor.run("beacon fuzz: hciEvents") {
            var tally = FuzzTally("beacons: HCI events")
            let seeds: [[UInt8]] = Self.frames.map { f in
                let params: [UInt8] = [0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, UInt8(f.count)] + f + [0xC3]
                return [0x3E, UInt8(params.count)] + params
            }
            for i in 0..<1_000 * Fuzz.scale {
                var rng = Fuzz.rng(0x4C3E, i)
                var event = Self.mutate(seeds[i % seeds.count], &rng)
                if i % 3 == 0, event.count > 2 { event[2] = 0x0D }
                do throws(BeaconParseError) {
                    let reports = try AdvertisingReport.parse(hciEvent: event) ?? []
                    let bad = reports.filter { r in r.rssi.map { !(-128...126).contains($0) } ?? false || r.address.count != 6 }
                    tally.input("#\(i) \(event)", bad.isEmpty ? [] : ["bad report \(bad)"])
                } catch {
                    tally.input("#\(i) \(event)", Self.oneLine(error.description))
                }
            }
            tally.finish()
        }
    }

    @Test("mutated whole recordings (btsnoop capture, JSON scan log): no crash, one-line messages, sane readings")
    func recordings() async throws {
        try await OffPoolExecutor.run("beacon fuzz: recordings") {
            let log = try SharedData.data("beacons/starksm64_two_scanners_2015-03-03.json.gz")
            let text = Array(try Gzip.decompress(log).prefix(6_000))
            let capture = [UInt8](
                Self.btsnoop(
                    events: Self.frames.map { f in
                        let params: [UInt8] = [0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, UInt8(f.count)] + f + [0xB0]
                        return [0x3E, UInt8(params.count)] + params
                    }))
            var tally = FuzzTally("beacons: recordings")
            for i in 0..<100 * Fuzz.fileScale {
                var rng = Fuzz.rng(0xB7, i)
                var data = i % 2 == 0 ? capture : text
                for _ in 0..<Int.random(in: 1...8, using: &rng) { data = Self.mutate(data, &rng) }
                let result = BeaconRecording.read(Data(data))
                var problems = result.messages.flatMap(Self.oneLine)
                problems += result.readings.filter { !(-128...127).contains($0.rssi) }.map { "rssi \($0.rssi)" }
                if result.messages.count != min(result.errorCount, BeaconReadResult.maxMessages) { problems.append("uncounted errors") }
                tally.input("#\(i)", problems)
            }
            tally.finish()
        }
    }

    /// A btsnoop (datalink 1002) capture of `events`.
    static func btsnoop(events: [[UInt8]]) -> Data {
        func be(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * (n - 1 - $0))) } }
        var out = Array("btsnoop\0".utf8) + be(1, 4) + be(1002, 4)
        for (i, e) in events.enumerated() {
            out += be(UInt64(e.count + 1), 4) + be(UInt64(e.count + 1), 4) + be(3, 4) + be(0, 4)
            out += be(UInt64(BtsnoopReader.unixEpochDelta) + UInt64(i) * 1_000_000, 8) + [0x04] + e
        }
        return Data(out)
    }
}
