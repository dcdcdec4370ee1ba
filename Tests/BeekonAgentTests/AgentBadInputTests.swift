import BeekonTestSupport
import Foundation
import Testing
import BeekonTesting

/// Garbage in: a clear one-line error, a non-zero exit, no crash, nothing stored.
@Suite("Agent: bad track files and bad config files")
struct AgentBadInputTests {
    /// Deterministic binary noise (SplitMix64), NUL bytes and all.
    static func noise(_ count: Int, seed: UInt64) -> Data {
        var rng = SeededRandom(seed: seed)
        var bytes = [UInt8]()
        bytes.reserveCapacity(count)
        while bytes.count < count {
            withUnsafeBytes(of: rng.next()) { bytes.append(contentsOf: $0) }
        }
        return Data(bytes.prefix(count))
    }

    struct BadTrack: Sendable, CustomTestStringConvertible {
        var name: String
        var contents: Data
        var testDescription: String { name }

        init(_ name: String, _ text: String) {
            self.name = name
            contents = Data(text.utf8)
        }
        init(_ name: String, data: Data) {
            self.name = name
            contents = data
        }
    }

    static let badTracks: [BadTrack] = [
        BadTrack("truncated-tag.gpx", #"<?xml version="1.0"?><gpx version="1.1"><trk><trkseg><trkpt lat="32.1" lon="#),
        BadTrack("not-xml.gpx", "this is not XML at all\n{[<>]}\n"),
        BadTrack(
            "wrong-root.gpx", #"<?xml version="1.0"?><kml><Placemark><Point><coordinates>1,2</coordinates></Point></Placemark></kml>"#),
        BadTrack(
            "bad-points.gpx",
            #"""
            <?xml version="1.0"?>
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="north" lon="-81.1"><time>2019-12-15T20:19:55Z</time></trkpt>
            <trkpt lat="132.0" lon="-81.1"><time>2019-12-15T20:19:56Z</time></trkpt>
            <trkpt lat="32.0" lon="-81.1"></trkpt>
            <trkpt lat="32.0" lon="-81.1"><time>yesterday</time></trkpt>
            </trkseg></trk></gpx>
            """#),
        BadTrack(
            "garbage.nmea",
            "$GPGGA,garbage,,,*00\n$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*FF\nhello world\n$$$$\n"),
        BadTrack("no-checksum.nmea", "GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,\nnot nmea\n"),
        BadTrack("no-lat.csv", "time,lon,speed\n2019-12-15T20:19:55Z,-81.097216,1.3\n2019-12-15T20:19:56Z,-81.097202,1.3\n"),
        BadTrack("bad-rows.csv", "time,lat,lon\nnot a time,32.1,-81.1\n2019-12-15T20:19:56Z,abc,-81.1\n2019-12-15T20:19:57Z,95.0,-81.1\n"),
        BadTrack("empty.gpx", ""),
        BadTrack("empty.csv", ""),
        BadTrack("empty.nmea", ""),
        BadTrack("blank.gpx", "  \n\n\t\n"),
        BadTrack("noise.gpx", data: noise(4096, seed: 1)),
        BadTrack("noise.nmea", data: noise(4096, seed: 2)),
        BadTrack("noise.csv", data: noise(4096, seed: 3)),
        BadTrack("noise.bin", data: noise(4096, seed: 4)),
    ]

    @Test(arguments: badTracks)
    func garbageTrackFailsCleanlyAndStoresNothing(_ bad: BadTrack) async throws {
        let tmp = TempDir()
        let track = try tmp.write(bad.name, bad.contents)
        let db = tmp.path("garbage.sqlite")
        let out = try await AgentProcess.run(["track", "--source", "replay:\(track)", "--db", db], timeout: .seconds(60))
        #expect(!out.signalled, "crashed with signal \(out.status); stderr: \(out.stderr)")
        #expect(out.status != 0, "exit 0 for \(bad.name); stdout: \(out.stdoutText)")
        let errorLines = out.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(errorLines.count == 1, "expected a one-line error, got:\n\(out.stderr)")
        #expect(errorLines.first?.hasPrefix("beekon: ") == true)
        #expect(errorLines.first?.contains(bad.name) == true, "the error should name the file: \(out.stderr)")
        #expect(!out.stdout.contains { $0.hasPrefix("started session") })
        if FileManager.default.fileExists(atPath: db) {
            #expect(try await AgentStatus.read(db: db).locations == 0)
        }
    }

    @Test func missingTrackFileFailsCleanly() async throws {
        let tmp = TempDir()
        let db = tmp.path("missing.sqlite")
        let out = try await AgentProcess.run(["track", "--source", "replay:\(tmp.path("nope.gpx"))", "--db", db])
        #expect(!out.signalled)
        #expect(out.status != 0)
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        #expect(out.stderr.contains("nope.gpx"))
        if FileManager.default.fileExists(atPath: db) {
            #expect(try await AgentStatus.read(db: db).locations == 0)
        }
    }

    struct BadConfig: Sendable, CustomTestStringConvertible {
        var label: String
        var json: String
        /// Text the one-line error must contain (the bad key, or the kind of problem).
        var mentions: [String]
        var testDescription: String { label }
    }

    static let badConfigs: [BadConfig] = [
        BadConfig(label: "unknown key", json: #"{"minTimeBetweenLocationSeconds": 10}"#, mentions: ["minTimeBetweenLocationSeconds"]),
        BadConfig(label: "unknown key next to good ones", json: #"{"preset":"saver","frobnicate":true}"#, mentions: ["frobnicate"]),
        BadConfig(
            label: "wrong type: string for number", json: #"{"minTimeBetweenLocationsSeconds": "30"}"#,
            mentions: ["minTimeBetweenLocationsSeconds"]),
        BadConfig(
            label: "wrong type: bool for number", json: #"{"minDistanceBetweenLocationsMeters": true}"#,
            mentions: ["minDistanceBetweenLocationsMeters"]),
        BadConfig(label: "wrong type: number for preset", json: #"{"preset": 2}"#, mentions: ["preset"]),
        BadConfig(label: "unknown preset", json: #"{"preset": "turbo"}"#, mentions: ["preset"]),
        BadConfig(
            label: "negative number", json: #"{"minDistanceBetweenLocationsMeters": -5}"#, mentions: ["minDistanceBetweenLocationsMeters"]),
        BadConfig(label: "null value", json: #"{"minTimeBetweenLocationsSeconds": null}"#, mentions: ["minTimeBetweenLocationsSeconds"]),
        BadConfig(label: "invalid JSON", json: #"{"preset": "saver""#, mentions: ["JSON"]),
        BadConfig(label: "empty file", json: "", mentions: ["JSON"]),
        BadConfig(label: "non-object: array", json: "[1, 2, 3]", mentions: ["object"]),
        BadConfig(label: "non-object: string", json: #""balanced""#, mentions: ["object"]),
    ]

    @Test(arguments: badConfigs)
    func badConfigExitsTwoNamingTheKey(_ bad: BadConfig) async throws {
        let tmp = TempDir()
        let config = try tmp.write("config.json", bad.json)
        let db = tmp.path("config.sqlite")
        let out = try await AgentProcess.run(
            ["track", "--source", "replay:\(Fixtures.visnjanGPX)", "--db", db, "--config", config], timeout: .seconds(60))
        #expect(!out.signalled)
        #expect(out.status == 2, "exit \(out.status); stderr: \(out.stderr)")
        let lines = out.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == 1, "expected a one-line error, got:\n\(out.stderr)")
        for m in bad.mentions {
            #expect(out.stderr.contains(m), "the error should mention \(m): \(out.stderr)")
        }
        #expect(!out.stdout.contains { $0.hasPrefix("started session") })
        if FileManager.default.fileExists(atPath: db) {
            #expect(try await AgentStatus.read(db: db).locations == 0)
        }
    }

    @Test func missingConfigFileExitsTwo() async throws {
        let tmp = TempDir()
        let out = try await AgentProcess.run(
            ["track", "--source", "replay:\(Fixtures.visnjanGPX)", "--db", tmp.path("x.sqlite"), "--config", tmp.path("absent.json")])
        #expect(out.status == 2, "exit \(out.status): \(out.stderr)")
        #expect(out.stderr.contains("absent.json"))
    }

    @Test func badSpeedAndSourceExitTwo() async throws {
        let tmp = TempDir()
        let db = tmp.path("x.sqlite")
        let speed = try await AgentProcess.run(["track", "--source", "replay:\(Fixtures.visnjanGPX)", "--speed", "0", "--db", db])
        #expect(speed.status == 2, "\(speed.stderr)")
        let source = try await AgentProcess.run(["track", "--source", "bogus:nowhere", "--db", db])
        #expect(source.status == 2, "\(source.stderr)")
        #expect(source.stderr.contains("bogus:nowhere"))
    }
}
