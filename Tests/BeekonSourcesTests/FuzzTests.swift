import Foundation
import Testing
import Beekon
@testable import BeekonSources

/// Seeded, bounded fuzzing: random bytes and mutated real lines through every
/// reader. Nothing may crash, garbage may not become a fix, and every fix that
/// does come out is sane.
@Suite("Fuzz")
struct FuzzTests {
    static let readers: [(TrackFormat, @Sendable (Data) throws(TrackReadError) -> TrackReadResult)] = [
        (.gpx, { d throws(TrackReadError) in try GPXReader.read(d) }),
        (.nmea, { d throws(TrackReadError) in try NMEAReader.read(d) }),
        (.csv, { d throws(TrackReadError) in try CSVTrackReader.read(d) }),
        (.ndjson, { d throws(TrackReadError) in try NDJSONTrackReader.read(d) }),
    ]

    static func randomBytes(_ rng: inout SeededGenerator, maxCount: Int) -> Data {
        let n = Int.random(in: 0...maxCount, using: &rng)
        // Bias towards the characters the formats care about.
        let alphabet = Array("$*,.\n\r<>/\"{}:0123456789ABCDEFGNPRMCSVWtrkpt lat=".utf8)
        return Data((0..<n).map { _ in
            Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
        })
    }

    @Test("random bytes: no crash, no fix", arguments: [TrackFormat.gpx, .nmea, .csv, .ndjson])
    func randomInput(_ format: TrackFormat) {
        var rng = SeededGenerator(seed: 0xBEE0 + UInt64(format.rawValue.count))
        let reader = Self.readers.first { $0.0 == format }!.1
        for _ in 0..<300 {
            let data = Self.randomBytes(&rng, maxCount: 600)
            do {
                let r = try reader(data)
                Issue.record("random bytes produced \(r.fixes.count) fixes as \(format)")
            } catch {
                #expect(!error.description.isEmpty && !error.description.contains("\n"))
            }
        }
    }

    static func mutate(_ line: Substring, _ rng: inout SeededGenerator) -> String {
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

    static func mutatedFile(_ data: Data, lines: Int, rate: Double, _ rng: inout SeededGenerator) -> Data {
        let text = String(decoding: data.prefix(60_000), as: UTF8.self)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(lines)
        let out = kept.map { Double.random(in: 0..<1, using: &rng) < rate ? mutate($0, &rng) : String($0) }
        return Data(out.joined(separator: "\n").utf8)
    }

    @Test("mutated real NMEA lines: no crash, sane fixes, never more than the clean file")
    func mutatedNMEA() throws {
        var rng = SeededGenerator(seed: 2024)
        for file in SharedData.nmeaFiles {
            let data = try SharedData.data(file)
            for _ in 0..<4 {
                let lines = 400
                let clean = Self.mutatedFile(data, lines: lines, rate: 0, &rng)
                let mutated = Self.mutatedFile(data, lines: lines, rate: 0.3, &rng)
                let cleanCount = (try? NMEAReader.read(clean).fixes.count) ?? 0
                var p = NMEAParser()
                let fixes = p.feed(mutated) + p.finish()
                #expect(allSane(fixes))
                #expect(fixes.count <= cleanCount + 1)
                #expect(p.diagnostics.skipped > 0)
            }
        }
    }

    @Test("mutated real GPX, CSV and NDJSON lines: no crash, sane fixes")
    func mutatedOthers() throws {
        var rng = SeededGenerator(seed: 7)
        let gpx = try SharedData.data("gpx/togeojson_apple_watch_walk_1hz.gpx")
        let clean = try GPXReader.read(gpx).fixes
        let csvText = "time,lat,lon,accuracy,speed,bearing,altitude\n" + clean.prefix(300).map {
            "\(WireTimestamp($0.timestamp)),\($0.latitude),\($0.longitude),\($0.accuracy ?? 0),\($0.speed ?? 0),\($0.bearing ?? 0),\($0.altitude ?? 0)"
        }.joined(separator: "\n")
        let ndjsonText = clean.prefix(300).map {
            "{\"timestamp\":\"\(WireTimestamp($0.timestamp))\",\"latitude\":\($0.latitude),\"longitude\":\($0.longitude),\"speed\":\($0.speed ?? 0)}"
        }.joined(separator: "\n")
        let inputs: [(Data, (Data) throws(TrackReadError) -> TrackReadResult)] = [
            (gpx, { d throws(TrackReadError) in try GPXReader.read(d) }),
            (Data(csvText.utf8), { d throws(TrackReadError) in try CSVTrackReader.read(d) }),
            (Data(ndjsonText.utf8), { d throws(TrackReadError) in try NDJSONTrackReader.read(d) }),
        ]
        for (data, reader) in inputs {
            for _ in 0..<6 {
                let mutated = Self.mutatedFile(data, lines: 300, rate: 0.2, &rng)
                do {
                    let r = try reader(mutated)
                    #expect(allSane(r.fixes))
                    #expect(r.fixes.count <= 300)
                } catch {
                    #expect(!error.description.contains("\n"))
                }
            }
        }
    }
}
