import Foundation
import Testing
import Beekon
@testable import BeekonSources

/// The gpsd JSON decoder and the per-epoch assembly, without a daemon.
@Suite("GPSD decoder and assembler")
struct GPSDFixAssemblerTests {
    /// Real gpsd 3.22 output (gpsfake on gpsd_bundg_zeus_9_boat.log), trimmed.
    static let boatLines = [
        #"{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"lat":52.850156667,"lon":5.313620000,"altHAE":42.8000,"altMSL":-4.0000,"alt":-4.0000,"magvar":1.6,"geoidSep":46.800,"eph":11.400}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2018-08-20T09:47:37.000Z","ept":0.005,"lat":52.850155000,"lon":5.313616667,"epx":7.467,"epy":8.881,"epv":20.700,"track":230.5000,"magtrack":231.8000,"magvar":1.4,"speed":2.881,"geoidSep":43.514,"eph":11.400,"sep":20.900,"depth":5.400}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2018-08-20T09:47:37.000Z","ept":0.005,"lat":52.850155000,"lon":5.313616667,"epx":7.467,"epy":8.881,"epv":20.700,"track":230.5000,"magtrack":231.8000,"magvar":1.4,"speed":2.881,"geoidSep":43.514,"eph":11.400,"sep":20.900,"depth":5.400,"wanglem":326.4,"wanglet":327.8,"wspeedt":5.8}"#,
        #"{"class":"SKY","device":"/dev/pts/1","xdop":0.50,"ydop":0.59,"vdop":0.90,"tdop":0.60,"hdop":0.60,"gdop":1.40,"pdop":1.10,"nSat":12,"uSat":12,"satellites":[{"PRN":7,"el":10.0,"az":333.0,"ss":39.0,"used":true,"gnssid":0,"svid":7},{"PRN":8,"el":12.0,"az":279.0,"ss":35.0,"used":false}]}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2018-08-20T09:47:37.000Z","lat":52.850056667,"lon":5.313411667,"altMSL":-4.0,"alt":-4.0,"eph":11.4}"#,
        #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2018-08-20T09:47:38.000Z","lat":52.850153333,"lon":5.313613333,"speed":2.778,"track":231.0,"eph":11.4}"#,
    ]

    static func feed(_ lines: [String], into a: inout GPSDFixAssembler, now: Double = 0) -> [RawFix] {
        a.feed(Array(lines.joined(separator: "\n").utf8) + [0x0A], now: now)
    }

    @Test func decodesTPVAndSKY() throws {
        guard case .tpv(let t) = try GPSDMessage.decode(Array(Self.boatLines[2].utf8)) else {
            Issue.record("not a TPV")
            return
        }
        #expect(t.mode == 3 && t.lat == 52.850155 && t.lon == 5.313616667 && t.speed == 2.881 && t.track == 230.5)
        #expect(t.eph == 11.4 && t.epx == 7.467 && t.epy == 8.881 && t.epv == 20.7 && t.device == "/dev/pts/1")
        #expect(t.time == Date(timeIntervalSince1970: 1_534_758_457))
        guard case .sky(let s) = try GPSDMessage.decode(Array(Self.boatLines[4].utf8)) else {
            Issue.record("not a SKY")
            return
        }
        #expect(s.hdop == 0.6 && s.pdop == 1.1 && s.satellitesUsed == 12)
        #expect(try GPSDMessage.decode(Array(Self.boatLines[0].utf8)) == .other("VERSION"))
        #expect(throws: GPSDMessage.DecodeError.notJSONObject) { try GPSDMessage.decode(Array("$GPGGA,1".utf8)) }
        #expect(throws: GPSDMessage.DecodeError.noClass) { try GPSDMessage.decode(Array(#"{"mode":3}"#.utf8)) }
        // Wrong types are absent fields, not a lost report.
        guard
            case .tpv(let odd) = try GPSDMessage.decode(
                Array(#"{"class":"TPV","mode":"3","lat":true,"lon":1e400,"time":7,"speed":-0.0}"#.utf8))
        else {
            Issue.record("not a TPV")
            return
        }
        #expect(odd.mode == 0 && odd.lat == nil && odd.lon == nil && odd.time == nil && odd.speed == 0)
    }

    /// Untimed reports are skipped; reports of one epoch merge, newest fields winning; one fix per epoch.
    @Test func mergesReportsOfOneEpoch() {
        var a = GPSDFixAssembler()
        let fixes = Self.feed(Self.boatLines, into: &a)
        #expect(fixes.count == 1, "the 09:47:38 epoch is still open")
        let f = fixes[0]
        #expect(f.timestamp == Date(timeIntervalSince1970: 1_534_758_457))
        #expect(f.latitude == 52.850056667 && f.longitude == 5.313411667, "the newest position of the epoch")
        #expect(f.speed == 2.881 && f.bearing == 230.5 && f.altitude == -4.0 && f.accuracy == 11.4)
        #expect(a.statistics.untimedReports == 1 && a.statistics.mergedReports == 2 && a.statistics.tpvReports == 5)
        // Settling: nothing before `settle`, the open epoch after it; a late report of it is dropped.
        #expect(a.idle(now: 0.5).isEmpty)
        let settled = a.idle(now: 1.0)
        #expect(settled.count == 1 && settled[0].timestamp == Date(timeIntervalSince1970: 1_534_758_458))
        #expect(Self.feed([Self.boatLines[6]], into: &a, now: 2).isEmpty)
        #expect(a.flush().isEmpty)
        #expect(a.statistics.fixes == 2)
    }

    @Test func ignoresNoFixAndKeepsPartialLines() {
        var a = GPSDFixAssembler()
        let noFix = #"{"class":"TPV","mode":1,"time":"2024-01-01T00:00:00.000Z","lat":1,"lon":2}"#
        let fix = #"{"class":"TPV","mode":2,"time":"2024-01-01T00:00:01.000Z","lat":1.5,"lon":2.5}"#
        let bytes = Array((noFix + "\r\n" + fix + "\n").utf8)
        var out: [RawFix] = []
        for chunk in stride(from: 0, to: bytes.count, by: 7) {
            out += a.feed(bytes[chunk..<min(chunk + 7, bytes.count)], now: 0)
        }
        out += a.flush()
        #expect(out.count == 1 && out[0].latitude == 1.5 && out[0].altitude == nil)
        #expect(a.statistics.noFixReports == 1)
    }

    @Test func horizontalAccuracyRule() {
        var t = GPSDMessage.TPV(mode: 3)
        #expect(GPSDFixAssembler.horizontalAccuracy(t, hdop: nil) == nil)
        #expect(GPSDFixAssembler.horizontalAccuracy(t, hdop: 1.2) == 6.0, "SKY hdop × 5 m")
        t.epx = 3
        t.epy = 4
        #expect(GPSDFixAssembler.horizontalAccuracy(t, hdop: 1.2) == 5.0, "sqrt(epx² + epy²)")
        t.eph = 7.5
        #expect(GPSDFixAssembler.horizontalAccuracy(t, hdop: 1.2) == 7.5, "eph wins")
    }

    /// The SKY fallback applies only to a recent SKY report.
    @Test func skyHDOPFallbackIsRecentOnly() {
        var a = GPSDFixAssembler()
        let sky = #"{"class":"SKY","hdop":2.0}"#
        let t1 = #"{"class":"TPV","mode":3,"time":"2024-01-01T00:00:01.000Z","lat":1,"lon":2}"#
        let t2 = #"{"class":"TPV","mode":3,"time":"2024-01-01T00:00:02.000Z","lat":1,"lon":2}"#
        var out = Self.feed([sky, t1], into: &a, now: 0)
        out += Self.feed([t2], into: &a, now: 10)
        out += a.flush()
        #expect(out.map(\.accuracy) == [10.0, nil])
    }

    /// Seeded random and mutated lines (one input each, `600 × BEEKON_FUZZ_SCALE` per stream):
    /// no crash, every decode error one line, no garbage fix, every fix sane.
    @Test(arguments: [UInt64(1), 2, 3])
    func fuzz(seed: UInt64) {
        var a = GPSDFixAssembler(settle: 0.5)
        let alphabet = Array(#"{}[]":,.-+eE0123456789 truefalsnlTPVSKYclassmodetimelatlonZ"#.utf8)
        var now = 0.0
        var tally = FuzzTally("gpsd JSON decoder + assembler #\(seed)")
        for round in 0..<600 * Fuzz.scale {
            var rng = Fuzz.rng(0x6B5D_0000 + seed, round)
            var bytes: [UInt8]
            let random = round % 2 == 0
            if random {
                bytes = (0..<Int.random(in: 0...400, using: &rng)).map { _ in
                    Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                }
            } else {
                bytes = Array(Self.boatLines.randomElement(using: &rng)!.utf8)
                for _ in 0..<Int.random(in: 1...4, using: &rng) where !bytes.isEmpty {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                    case 1: bytes.remove(at: i)
                    case 2: bytes.insert(alphabet.randomElement(using: &rng)!, at: i)
                    default: bytes = Array(bytes.prefix(i))
                    }
                }
            }
            bytes.removeAll { $0 == 0x0A }
            bytes.append(0x0A)
            var problems: [String] = []
            do {
                let message = try GPSDMessage.decode(bytes.dropLast())
                if random, case .tpv(let t) = message, t.mode >= 2, t.lat != nil, t.lon != nil, t.time != nil {
                    problems.append("random bytes decoded as a located TPV: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                }
            } catch {
                if error.description.isEmpty || error.description.contains(where: \.isNewline) { problems.append("error is not one line") }
            }
            now += Double.random(in: 0...0.4, using: &rng)
            let fixes = a.feed(bytes, now: now) + a.idle(now: now)
            if !allSane(fixes) || !fixes.allSatisfy({ $0.accuracy.map { $0.isFinite && $0 > 0 } ?? true }) {
                problems.append("an insane fix: \(fixes)")
            }
            tally.input("stream \(seed) round \(round)", problems)
        }
        // Pathological shapes.
        let deep = Array(repeating: UInt8(ascii: "["), count: 10_000) + [0x0A]
        let nested = Array(#"{"class":"TPV","satellites":"#.utf8) + Array(repeating: UInt8(ascii: "["), count: 5_000) + [0x0A]
        let long = Array(repeating: UInt8(ascii: "{"), count: GPSDMessage.maxLineLength + 10) + [0x0A]
        for input in [deep, nested, long] {
            tally.input("pathological", a.feed(input, now: now).isEmpty ? [] : ["a fix from a pathological line"])
        }
        _ = a.flush()
        #expect(a.statistics.malformedLines > 0)
        tally.finish()
    }
}
