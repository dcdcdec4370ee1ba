import BeekonWire
import Foundation
import Testing
import Beekon
@testable import BeekonSources
import BeekonTesting

@Suite("NMEA parser")
struct NMEAParserTests {
    /// Counts RMC sentences with status A and a correct checksum, by plain string work.
    static func validRMCs(_ data: Data) -> Int {
        let text = String(decoding: data, as: UTF8.self)
        return text.split(whereSeparator: \.isNewline).filter { line in
            guard let dollar = line.lastIndex(of: "$"), let star = line.lastIndex(of: "*") else { return false }
            let body = line[line.index(after: dollar)..<star]
            let sum = body.utf8.reduce(UInt8(0), ^)
            guard UInt8(line[line.index(after: star)...].prefix(2), radix: 16) == sum else { return false }
            let fields = body.split(separator: ",", omittingEmptySubsequences: false)
            return fields[0].hasSuffix("RMC") && fields.count > 2 && fields[2] == "A"
        }.count
    }

    /// Builds a sentence with a correct checksum.
    static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0), ^)
        let hex = String(sum, radix: 16, uppercase: true)
        return "$\(body)*\(hex.count == 1 ? "0" + hex : hex)"
    }

    @Test("every shared NMEA log parses with one fix per valid RMC epoch", arguments: SharedData.nmeaFiles)
    func realFiles(_ file: String) throws {
        let data = try SharedData.data(file)
        let result = try read(file)
        #expect(result.fixes.count == Self.validRMCs(data))
        #expect(result.diagnostics.skipped(.badChecksum) == 0)
        #expect(result.diagnostics.skipped(.malformed) == 0)
        #expect(allSane(result.fixes))
        #expect(result.fixes.allSatisfy { $0.speed != nil && $0.bearing != nil })
        if file.contains("derived") { #expect(result.fixes.allSatisfy { $0.accuracy != nil && $0.altitude != nil }) }
    }

    @Test(
        "documented fix counts",
        arguments: [
            ("nmea/gpsd_bundg_zeus_9_boat.log", 146),
            ("nmea/gpsd_haicom-305N_walk.log", 68),
            ("nmea/gpsd_humminbird-M37_powerboat.log", 17),
            ("nmea/derived_304_to_UL_bus.nmea", 2144),
            ("nmea/derived_apple_watch_walk.nmea", 1852),
        ])
    func documentedCounts(_ file: String, _ count: Int) throws {
        #expect(try read(file).fixes.count == count)
    }

    @Test("derived bus log: merged GGA+GSA+RMC epoch values")
    func spotCheck() throws {
        let fixes = try read("nmea/derived_304_to_UL_bus.nmea").fixes
        let first = fixes[0]
        let second = fixes[1]
        #expect(WireTimestamp(first.timestamp).description == "2019-02-18T07:45:50.000Z")
        #expect(abs(first.latitude - (52 + 37.7491 / 60)) < 1e-9)
        #expect(abs(first.longitude + (8 + 39.7048 / 60)) < 1e-9)
        #expect(first.altitude == 19.5)
        #expect(first.accuracy == 5.0)
        #expect(abs((second.speed ?? 0) - 5.40 * 1852 / 3600) < 1e-9)
        #expect(second.bearing == 163.8)
        // The GPX it was derived from has the same first position.
        let gpx = try read("gpx/movingpandas_304_to_UL_bus_1hz.gpx").fixes[0]
        #expect(abs(gpx.latitude - first.latitude) < 1e-5 && gpx.timestamp == first.timestamp)
    }

    @Test("haicom: 2007 dates as logged, invalid epochs counted")
    func haicom() throws {
        let r = try read("nmea/gpsd_haicom-305N_walk.log")
        #expect(WireTimestamp(r.fixes[0].timestamp).description == "2007-04-08T09:53:04.802Z")
        #expect(r.diagnostics.skipped(.invalidFix) >= 6)
        #expect(r.fixes[0].accuracy == 85)
    }

    @Test("humminbird: $IN talker, time goes backwards once, file order kept")
    func humminbird() throws {
        let fixes = try read("nmea/gpsd_humminbird-M37_powerboat.log").fixes
        let steps = zip(fixes, fixes.dropFirst()).map { $1.timestamp.timeIntervalSince($0.timestamp) }
        #expect(steps.filter { $0 < 0 }.count == 1)
        #expect(fixes.first?.altitude == nil)
    }

    @Test("bad and missing checksums are rejected and counted")
    func checksums() {
        let good = Self.sentence("GPRMC,120000.00,A,4807.0380,N,01131.0000,E,10.0,84.4,010324,,,A")
        var bad = good
        bad.removeLast()
        bad += good.hasSuffix("0") ? "1" : "0"
        let noSum = String(good.prefix(while: { $0 != "*" }))
        let lowerHex = String(good.dropLast(2)) + good.suffix(2).lowercased()
        var p = NMEAParser()
        var fixes = p.feed(line: bad) + p.feed(line: noSum)
        fixes += p.finish()
        #expect(fixes.isEmpty)
        #expect(p.diagnostics.skipped(.badChecksum) == 2)
        #expect(p.diagnostics.skipped == 2)
        var r = NMEAParser()
        #expect((r.feed(line: lowerHex) + r.finish()).count == 1)
        var q = NMEAParser()
        fixes = q.feed(line: good) + q.finish()
        #expect(fixes.count == 1)
        #expect(abs((fixes.first?.speed ?? 0) - 10 * 0.514444) < 1e-4)
    }

    @Test("epoch merging: GGA+GSA+RMC+VTG of one time give one fix; invalid receivers states skip")
    func merging() {
        var p = NMEAParser()
        var out: [RawFix] = []
        for body in [
            "GNGGA,101010,5000.0000,N,00800.0000,E,1,08,1.2,100.5,M,47.0,M,,",
            "GNGSA,A,3,01,02,03,,,,,,,,,,2.0,0.9,1.8",
            "GNRMC,101010,A,5000.0000,N,00800.0000,E,,,311224,,,A",
            "GNVTG,45.0,T,,M,3.6,N,6.7,K,A",
            "GNGGA,101011,5000.0010,N,00800.0010,E,0,00,99.9,100.5,M,47.0,M,,",
            "GNRMC,101011,A,5000.0010,N,00800.0010,E,1.0,10.0,311224,,,A",
            "GNRMC,101012,V,5000.0010,N,00800.0010,E,1.0,10.0,311224,,,N",
            "GNGSA,A,1,,,,,,,,,,,,,99.9,99.9,99.9",
            "GNGGA,101013,5000.0010,N,00800.0010,E,1,05,1.0,100.5,M,47.0,M,,",
            "GNRMC,235959.999,A,5000.0020,S,00800.0020,W,0.0,,311224,,,A",
        ] {
            out += p.feed(line: Self.sentence(body))
        }
        out += p.finish()
        #expect(out.count == 2)
        let f = out[0]
        #expect(f.accuracy == 6.0)  // GGA HDOP 1.2 × 5 m
        #expect(f.altitude == 100.5)
        #expect(abs((f.speed ?? 0) - 3.6 * 1852 / 3600) < 1e-9)  // from VTG
        #expect(f.bearing == 45.0)
        #expect(WireTimestamp(f.timestamp).description == "2024-12-31T10:10:10.000Z")
        #expect(WireTimestamp(out[1].timestamp).description == "2024-12-31T23:59:59.999Z")
        #expect(out[1].latitude < 0 && out[1].longitude < 0)
        #expect(p.diagnostics.skipped(.invalidFix) == 2)
        #expect(p.diagnostics.skipped(.incompleteEpoch) == 1)
    }

    @Test("partial lines across chunks, noise, comments and lines without terminators")
    func incremental() throws {
        let data = try SharedData.data("nmea/gpsd_haicom-305N_walk.log")
        let whole = try NMEAReader.read(data).fixes
        var rng = SeededRandom(seed: 42)
        var p = NMEAParser()
        var out: [RawFix] = []
        var i = data.startIndex
        while i < data.endIndex {
            let n = Int.random(in: 1...97, using: &rng)
            let end = min(i + n, data.endIndex)
            out += p.feed(data[i..<end])
            i = end
        }
        out += p.finish()
        #expect(out == whole)

        var q = NMEAParser()
        let line = Self.sentence("GPRMC,120000,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W")
        var noisy = Data([0x00, 0xFF, 0xFE, 0x13, 0x0A])
        noisy += Data("# a comment\r\n\u{01}\u{02}garbage\n".utf8)
        noisy += Data("xx\(line)".utf8)
        out = q.feed(noisy) + q.finish()
        #expect(out.count == 1)
        #expect(q.diagnostics.skipped(.malformed) == 2)
    }

    @Test("an overlong line without terminator is dropped, not buffered")
    func overlong() {
        var p = NMEAParser()
        let junk = [UInt8](repeating: 0x41, count: NMEAParser.maxLineLength * 3)
        let out = p.feed(junk) + p.feed(Array("\n".utf8)) + p.finish()
        #expect(out.isEmpty)
        #expect(p.diagnostics.skipped(.malformed) == 1)
    }

    @Test("malformed logs give one-line errors")
    func malformedLogs() throws {
        let e1 = #expect(throws: TrackReadError.self) { try NMEAReader.read(Data("hello\nworld\n".utf8), source: "x.nmea") }
        #expect(e1?.description.hasPrefix("x.nmea: not an NMEA track: no NMEA sentence with a valid checksum") == true)
        #expect(e1?.description.contains("line 1: not an NMEA sentence") == true)
        let invalidOnly = Self.sentence("GPRMC,120000,V,,,,,,,230394,,") + "\n"
        let e2 = #expect(throws: TrackReadError.self) { try NMEAReader.read(Data(invalidOnly.utf8), source: "v.nmea") }
        guard case .noFixes(_, let d)? = e2 else {
            Issue.record("expected noFixes")
            return
        }
        #expect(d.skipped(.invalidFix) == 1)
        let e3 = #expect(throws: TrackReadError.self) { try NMEAReader.read(Data(), source: "e.nmea") }
        #expect(e3?.description.contains("empty") == true)
    }

    @Test("out-of-range and malformed fields never make a fix")
    func badFields() {
        var p = NMEAParser()
        var out: [RawFix] = []
        for body in [
            "GPRMC,120000,A,9107.038,N,01131.000,E,0,0,230394,,",
            "GPRMC,120001,A,4807.038,N,18131.000,E,0,0,230394,,",
            "GPRMC,120002,A,4867.038,N,01131.000,E,0,0,230394,,",
            "GPRMC,120003,A,4807.038,X,01131.000,E,0,0,230394,,",
            "GPRMC,120004,A,nan,N,01131.000,E,0,0,230394,,",
            "GPRMC,120005,A,4807.038,N,01131.000,E,0,0,320394,,",
            "GPRMC,250006,A,4807.038,N,01131.000,E,0,0,230394,,",
            "GPRMC,120007,A,4807.038,N,01131.000,E,0,0,,,",
            "GPRMC",
            "GP",
        ] {
            out += p.feed(line: Self.sentence(body))
        }
        out += p.finish()
        #expect(out.isEmpty)
        #expect(p.diagnostics.skipped == 10)
    }
}
