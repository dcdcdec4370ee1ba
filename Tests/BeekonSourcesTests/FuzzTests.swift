import BeekonWire
import BeekonTestSupport
import Foundation
import Testing
import Beekon
@testable import BeekonSources
import BeekonTesting

/// Seeded, bounded fuzzing: random bytes and mutated real lines through every
/// reader. Nothing may crash, garbage may not become a fix, every fix that does
/// come out is sane, and every error is one line. Sized by `BEEKON_FUZZ_SCALE`,
/// seeded by `BEEKON_FUZZ_SEED` (see `Fuzz`).
@Suite("Fuzz", .tags(.fuzz), .skippable(.fuzz))
struct FuzzTests {
    static let readers: [(TrackFormat, @Sendable (Data) throws(TrackReadError) -> TrackReadResult)] = [
        (.gpx, { d throws(TrackReadError) in try GPXReader.read(d) }),
        (.nmea, { d throws(TrackReadError) in try NMEAReader.read(d) }),
        (.csv, { d throws(TrackReadError) in try CSVTrackReader.read(d) }),
        (.ndjson, { d throws(TrackReadError) in try NDJSONTrackReader.read(d) }),
    ]

    static func randomBytes(_ rng: inout SeededRandom, maxCount: Int) -> Data {
        let n = Int.random(in: 0...maxCount, using: &rng)
        // Bias towards the characters the formats care about.
        let alphabet = Array("$*,.\n\r<>/\"{}:0123456789ABCDEFGNPRMCSVWtrkpt lat=".utf8)
        return Data(
            (0..<n).map { _ in
                Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
            })
    }

    /// A reader's error is one non-empty line.
    static func oneLine(_ error: TrackReadError) -> [String] {
        error.description.isEmpty || error.description.contains(where: \.isNewline)
            ? ["error is not one line: \(error.description.debugDescription)"] : []
    }

    @Test("random bytes: no crash, no fix", arguments: [TrackFormat.gpx, .nmea, .csv, .ndjson])
    func randomInput(_ format: TrackFormat) async {
        await OffPoolExecutor.run("readers fuzz: randomInput") {
            let reader = Self.readers.first { $0.0 == format }!.1
            var tally = FuzzTally("readers: random \(format.rawValue)")
            for i in 0..<400 * Fuzz.scale {
                var rng = Fuzz.rng(0xBEE0 + UInt64(format.rawValue.count), i)
                let data = Self.randomBytes(&rng, maxCount: 600)
                do throws(TrackReadError) {
                    let r = try reader(data)
                    tally.input("#\(i)", ["random bytes produced \(r.fixes.count) fixes as \(format): \(data.base64EncodedString())"])
                } catch {
                    tally.input("#\(i) base64 \(data.base64EncodedString())", Self.oneLine(error))
                }
            }
            tally.finish()
        }
    }

    /// Inputs the fuzzers found (random CSV, seed 8 #72 and #101): a quoted header field held
    /// a line break and the "no lat/lon columns" message echoed it, two lines.
    @Test(arguments: [
        "Ij0KtW5H3yzvIFsKazIsMzg8IHQL+grCmTZsR2QeCZmKvyouQw1DkSQNSkQ0JVZQaw+d8v7dh/pTU6ZTLx8+M7FF9EJwCTZBQyZcRDJGJdFeTfJwJ9QPcX0diaGFciBDXC8+CkVNYUEkdGENzHL2aj5Ge3RppKUgdHSm1VhFhjxGZTQGIPPXTVZhcG9X7UYKWk2gA8cfpSeHebA8RT8uRnRDJGE8a3RncCw0JFIqLmRgNCpSJhsdj0P+7j68UzJ7M5NDvVNyqjqcIujEUt2OQyA4AjlBL2H3TlONbMNtz301OWG5AhAsdD0uOglDiFMfMSo0WkQk9i+MQzlcRyp0NE1w+V3KzSi+PEcNWDTvKptEVQRgcipVfTEiUypDCe10cB7WUzoK8zM8PHSdVsJBl1U5fWT8M0I0BEY9PbeZ6z9WQUNQKTz8JDR/ULZ0qvFX2N17RmRABHQ8PERSVo6CONvMICqAwb88rGy4hSqW2Ehhbg==",
        "lv9sLCIkOB1GRHdhc3RBsA8yLAosV9kwN0E68DhBPjhEQyTuqJ5fC0cPWcwGsisNQWuTCkIvNjKTInCfotowtw5XNTUNHD4dM1QsClBHRkFOOZkm0BcyMMOogCd2IFCup0XiQzWVfa0wMH9LYQ3ePAI88IRDOLpXLkM4xn3ivWmMObM=",
        "InRpDQptZSIsbGF0CiJ4",  // a short one: "ti␍␊me",lat␊"x
    ])
    func csvHeaderWithALineBreakFailsWithOneLine(_ base64: String) {
        #expect(throws: TrackReadError.self) { try CSVTrackReader.read(Data(base64Encoded: base64)!) }
        do { _ = try CSVTrackReader.read(Data(base64Encoded: base64)!) } catch {
            #expect(Self.oneLine(error).isEmpty, "\(error.description.debugDescription)")
        }
    }

    /// Inputs the fuzzers found at scale 100 (random NMEA seed 8 #4094 and #18479, random CSV
    /// #22834): the message echoed a checksum or header holding a form feed or line break. Every
    /// reader error is now escaped to one line in `TrackReadError.description`.
    @Test(arguments: [
        (TrackFormat.nmea, "MSq/OFTeLjLiq3RzGzHWPDgAGSFDN2wqqjUMMzlRNVBGcHA="),
        (
            .nmea,
            "Q1gvJNXzWjo5Q1loynuQOn9H0ENXEZYkKleA0gwwdLxnTUI91y90ujcSNXs5Fw/vcDNRU6h9dBNrAbFQa5xeb3M4dDRsgk5IOG8zojcgQRe0M1BWNg0kRDd0dLYza6UyRwp0JHI4Uy5HcFIqQ99tojxGdDA4NXFCsS5/VzZQqQsvPzWsnSwNu3BBxMwyVnR/pfYTPA=="
        ),
        (
            .csv,
            "DUFs6rNkwoV/Vy6gdEVSayrXkkSTRjokMk0qcSw0V0J9huAneplFMq9FKmo5OSo9NDJDmA00cw1GKuU1JDBsQo4NL3Q29KPLmUd0ti95RjQcPnRGIfMH9WA6JC5OQjY8RkTIU0NPPhp38KR9OmJWo6ccMi8gJDRGy2F0KvQ4vaA42FAuLuhyclf4B84dRlLHQ0EjQu5DMFM="
        ),
    ])
    func readerErrorsFoundByFuzzingAreOneLine(_ format: TrackFormat, _ base64: String) {
        let reader = Self.readers.first { $0.0 == format }!.1
        do {
            let r = try reader(Data(base64Encoded: base64)!)
            Issue.record("random bytes produced \(r.fixes.count) fixes")
        } catch {
            #expect(Self.oneLine(error).isEmpty, "\(error.description.debugDescription)")
        }
    }

    /// An input the fuzzer found (random GPX, seed 8 #511): the first element's name holds
    /// invalid UTF-8 and FoundationXML trapped on it (it force-unwraps decoded names). Also the
    /// same in an attribute name and in a later element, and a track whose text holds a Latin-1
    /// byte: its points still come through.
    @Test func gpxWithInvalidUTF8InANameFailsCleanly() throws {
        for bytes: [UInt8] in [
            Array(Data(base64Encoded: "PHRw/mGYOhij8hV74PBrU3VM6r4xPPhVPHbKQWzXDFdCCRvtLyTqpEGnU7Q3YU76N1/HM//BL5JwoyI5Y1IRQ/s=")!),
            Array("<gpx".utf8) + [0xFE] + Array("/>".utf8),
            Array("<gpx a".utf8) + [0xC0, 0xAF] + Array("=\"1\"/>".utf8),
            Array("<gpx><trk><x".utf8) + [0xFF] + Array("/></trk></gpx>".utf8),
        ] {
            #expect(throws: TrackReadError.self) { try GPXReader.read(Data(bytes)) }
        }
        let latin1 =
            Array(#"<gpx><trk><name>Caf"#.utf8) + [0xE9]
            + Array(#"</name><trkseg><trkpt lat="1" lon="2"><time>2024-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>"#.utf8)
        let r = try GPXReader.read(Data(latin1))
        #expect(r.fixes.count == 1 && allSane(r.fixes))
    }

    static func mutate(_ line: Substring, _ rng: inout SeededRandom) -> String {
        var bytes = Array(line.utf8)
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let op = Int.random(in: 0..<4, using: &rng)
            let i = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch op {
            case 0 where !bytes.isEmpty: bytes[i] = UInt8.random(in: 0...255, using: &rng)
            case 1 where !bytes.isEmpty: bytes.remove(at: i)
            case 2: bytes.insert(UInt8.random(in: 0x20...0x7E, using: &rng), at: i)
            default: bytes = Array(bytes.prefix(i))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func mutatedFile(_ data: Data, lines: Int, rate: Double, _ rng: inout SeededRandom) -> Data {
        let text = String(decoding: data.prefix(60_000), as: UTF8.self)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(lines)
        let out = kept.map { Double.random(in: 0..<1, using: &rng) < rate ? mutate($0, &rng) : String($0) }
        return Data(out.joined(separator: "\n").utf8)
    }

    @Test("mutated real NMEA lines: no crash, sane fixes, never more than the clean file")
    func mutatedNMEA() async throws {
        try await OffPoolExecutor.run("readers fuzz: mutatedNMEA") {
            var tally = FuzzTally("readers: mutated NMEA")
            for (n, file) in SharedData.nmeaFiles.enumerated() {
                let data = try SharedData.data(file)
                let lines = 400
                var none = SeededRandom(seed: 0)
                let cleanCount = (try? NMEAReader.read(Self.mutatedFile(data, lines: lines, rate: 0, &none)).fixes.count) ?? 0
                for round in 0..<4 * Fuzz.fileScale {
                    var rng = Fuzz.rng(2024 + UInt64(n), round)
                    let mutated = Self.mutatedFile(data, lines: lines, rate: 0.3, &rng)
                    var p = NMEAParser()
                    let fixes = p.feed(mutated) + p.finish()
                    var problems: [String] = []
                    if !allSane(fixes) { problems.append("an insane fix") }
                    if fixes.count > cleanCount + 1 {
                        problems.append("\(fixes.count) fixes from a file whose clean lines give \(cleanCount)")
                    }
                    if p.diagnostics.skipped == 0 { problems.append("nothing skipped") }
                    tally.input("\(file) round \(round)", problems)
                }
            }
            tally.finish()
        }
    }

    @Test("mutated real GPX, CSV and NDJSON lines: no crash, sane fixes")
    func mutatedOthers() async throws {
        try await OffPoolExecutor.run("readers fuzz: mutatedOthers") {
            let gpx = try SharedData.data("gpx/togeojson_apple_watch_walk_1hz.gpx")
            let clean = try GPXReader.read(gpx).fixes
            let csvText =
                "time,lat,lon,accuracy,speed,bearing,altitude\n"
                + clean.prefix(300).map {
                    "\(WireTimestamp($0.timestamp)),\($0.latitude),\($0.longitude),\($0.accuracy ?? 0),\($0.speed ?? 0),\($0.bearing ?? 0),\($0.altitude ?? 0)"
                }.joined(separator: "\n")
            let ndjsonText = clean.prefix(300).map {
                "{\"timestamp\":\"\(WireTimestamp($0.timestamp))\",\"latitude\":\($0.latitude),\"longitude\":\($0.longitude),\"speed\":\($0.speed ?? 0)}"
            }.joined(separator: "\n")
            let inputs: [(String, Data, (Data) throws(TrackReadError) -> TrackReadResult)] = [
                ("gpx", gpx, { d throws(TrackReadError) in try GPXReader.read(d) }),
                ("csv", Data(csvText.utf8), { d throws(TrackReadError) in try CSVTrackReader.read(d) }),
                ("ndjson", Data(ndjsonText.utf8), { d throws(TrackReadError) in try NDJSONTrackReader.read(d) }),
            ]
            var tally = FuzzTally("readers: mutated GPX/CSV/NDJSON")
            for (k, (name, data, reader)) in inputs.enumerated() {
                for round in 0..<6 * Fuzz.fileScale {
                    var rng = Fuzz.rng(7 + UInt64(k), round)
                    let mutated = Self.mutatedFile(data, lines: 300, rate: 0.2, &rng)
                    do throws(TrackReadError) {
                        let r = try reader(mutated)
                        var problems: [String] = []
                        if !allSane(r.fixes) { problems.append("an insane fix") }
                        if r.fixes.count > 300 { problems.append("\(r.fixes.count) fixes from 300 lines") }
                        tally.input("\(name) round \(round)", problems)
                    } catch {
                        tally.input("\(name) round \(round)", Self.oneLine(error))
                    }
                }
            }
            tally.finish()
        }
    }
}
