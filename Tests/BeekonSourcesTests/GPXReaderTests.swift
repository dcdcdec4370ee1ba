import BeekonWire
import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("GPX reader")
struct GPXReaderTests {
    /// Counts `<trkpt` blocks that contain a `<time>`, by plain text search (independent of XMLParser).
    static func trkptsWithTime(_ text: String) -> Int {
        text.components(separatedBy: "<trkpt").dropFirst().filter { block in
            let body = block.components(separatedBy: "</trkpt>").first ?? ""
            return body.contains("<time>")
        }.count
    }

    @Test("every shared GPX file parses with one fix per timed trkpt", arguments: SharedData.gpxFiles)
    func realFiles(_ file: String) throws {
        let text = String(decoding: try SharedData.data(file), as: UTF8.self)
        let expected = Self.trkptsWithTime(text)
        let result = try read(file)
        #expect(expected > 400)
        #expect(result.fixes.count == expected)
        #expect(result.diagnostics.format == .gpx)
        #expect(result.diagnostics.records == expected)
        #expect(result.diagnostics.skipped == 0)
        #expect(allSane(result.fixes))
    }

    @Test("documented point counts")
    func documentedCounts() throws {
        #expect(try read("gpx/togeojson_apple_watch_walk_1hz.gpx").fixes.count == 1856)
        #expect(try read("gpx/movingpandas_304_to_UL_bus_1hz.gpx").fixes.count == 2144)
        #expect(try read("gpx/gpxgo_visnjan_4s.gpx").fixes.count == 413)
    }

    @Test("the Apple Watch extensions (speed, course, hAcc) and ele are read")
    func extensionsSpotCheck() throws {
        let fixes = try read("gpx/togeojson_apple_watch_walk_1hz.gpx").fixes
        let first = try #require(fixes.first)
        #expect(first.latitude == 32.064999)
        #expect(first.longitude == -81.097216)
        #expect(first.altitude == 14.601502)
        #expect(first.speed == 1.310662)
        #expect(first.bearing == 101.747269)
        #expect(first.accuracy == 1.801682)
        #expect(WireTimestamp(first.timestamp).description == "2019-12-15T20:19:55.000Z")
        #expect(fixes.allSatisfy { $0.speed != nil && $0.bearing != nil && $0.accuracy != nil })
    }

    @Test("repeated timestamps are kept in file order (the walk has 4)")
    func fileOrderKept() throws {
        let fixes = try read("gpx/togeojson_apple_watch_walk_1hz.gpx").fixes
        let notLater = zip(fixes, fixes.dropFirst()).filter { $1.timestamp <= $0.timestamp }.count
        #expect(notLater == 4)
    }

    @Test("GPX 1.0 track points win over waypoints; waypoints are not counted as skipped")
    func trkptOverWpt() throws {
        let r = try read("gpx/gpxgo_visnjan_4s.gpx")
        #expect(r.fixes.first?.latitude == 45.273245)
        #expect(r.fixes.first?.altitude == 271.0)
        #expect(r.fixes.first?.speed == nil)
    }

    static func gpx(_ body: String, version: String = "1.1") -> Data {
        Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="\(version)" creator="test" xmlns="http://www.topografix.com/GPX/1/1"
                 xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v2">
            \(body)
            </gpx>
            """.utf8)
    }

    @Test("namespaced extensions, GPX 1.0 speed/course, hdop fallback and rtept fallback")
    func variants() throws {
        let r = try GPXReader.read(
            Self.gpx(
                """
                <rte><rtept lat="1.5" lon="2.5"><time>2024-01-01T00:00:00.5+01:00</time><hdop>2</hdop>
                  <extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>3.5</gpxtpx:speed><gpxtpx:course>90</gpxtpx:course></gpxtpx:TrackPointExtension></extensions>
                </rtept>
                <rtept lat="1.6" lon="2.6"><time>2024-01-01T00:00:01Z</time><speed>4</speed><course>180</course><hdop>2</hdop><extensions><hAcc>7</hAcc></extensions></rtept></rte>
                <wpt lat="9" lon="9"><time>2024-01-01T00:00:00Z</time></wpt>
                """))
        #expect(r.fixes.count == 2)
        #expect(r.fixes[0].speed == 3.5)
        #expect(r.fixes[0].bearing == 90)
        #expect(r.fixes[0].accuracy == 10)
        #expect(WireTimestamp(r.fixes[0].timestamp).description == "2023-12-31T23:00:00.500Z")
        #expect(r.fixes[1].speed == 4)
        #expect(r.fixes[1].bearing == 180)
        #expect(r.fixes[1].accuracy == 7)
    }

    @Test("points without time, bad coordinates, fix none: skipped and counted")
    func skipped() throws {
        let r = try GPXReader.read(
            Self.gpx(
                """
                <trk><trkseg>
                <trkpt lat="10" lon="20"><time>2024-01-01T00:00:00Z</time></trkpt>
                <trkpt lat="10" lon="20"></trkpt>
                <trkpt lat="91" lon="20"><time>2024-01-01T00:00:01Z</time></trkpt>
                <trkpt lat="NaN" lon="20"><time>2024-01-01T00:00:02Z</time></trkpt>
                <trkpt lat="10" lon="inf"><time>2024-01-01T00:00:03Z</time></trkpt>
                <trkpt lon="20"><time>2024-01-01T00:00:04Z</time></trkpt>
                <trkpt lat="10" lon="20"><time>yesterday</time></trkpt>
                <trkpt lat="10" lon="20"><time>2024-01-01T00:00:05Z</time><fix>none</fix></trkpt>
                <trkpt lat="10" lon="20"><time>2024-01-01T00:00:06Z</time><ele>nan</ele><speed>1e999</speed></trkpt>
                </trkseg></trk>
                """), source: "t.gpx")
        #expect(r.fixes.count == 2)
        #expect(r.fixes[1].altitude == nil && r.fixes[1].speed == nil)
        let d = r.diagnostics
        #expect(d.records == 9)
        #expect(d.skipped(.missingTime) == 1)
        #expect(d.skipped(.badCoordinate) == 4)
        #expect(d.skipped(.badTime) == 1)
        #expect(d.skipped(.invalidFix) == 1)
        #expect(d.problems.first?.hasPrefix("line ") == true)
    }

    @Test(
        "malformed GPX gives one-line errors naming the file",
        arguments: [
            ("", "empty"),
            ("hello, world", "XML error at line 1"),
            ("<html><body/></html>", "root element is <html>"),
            ("<?xml version=\"1.0\"?><gpx version=\"1.1\"><trk><name>x</name></trk></gpx>", "no <trkpt>"),
            ("<gpx><trk><trkseg><trkpt lat=\"1\"", "ends before"),
        ])
    func malformed(_ input: String, _ expected: String) throws {
        let error = #expect(throws: TrackReadError.self) {
            try GPXReader.read(Data(input.utf8), source: "bad.gpx")
        }
        guard case .notATrack? = error, let text = error?.description else {
            Issue.record("expected notATrack, got \(String(describing: error))")
            return
        }
        #expect(text.hasPrefix("bad.gpx: not a GPX track"))
        #expect(text.contains(expected), "\(text)")
        #expect(!text.contains("\n"))
    }

    @Test("a GPX whose points all lack time fails with noFixes and says why")
    func noTimes() throws {
        let input = Self.gpx("<trk><trkseg><trkpt lat=\"1\" lon=\"2\"/><trkpt lat=\"1\" lon=\"2\"></trkpt></trkseg></trk>")
        let error = #expect(throws: TrackReadError.self) { try GPXReader.read(input, source: "nt.gpx") }
        guard case .noFixes(let file, let d)? = error else {
            Issue.record("expected noFixes")
            return
        }
        #expect(file == "nt.gpx")
        #expect(d.skipped(.missingTime) == 2)
        #expect(error?.description.contains("2 missing time") == true)
        #expect(error?.description.contains("has no <time>") == true)
    }

    @Test("a truncated GPX keeps the points before the break and counts it")
    func truncated() throws {
        let data = try SharedData.data("gpx/gpxgo_visnjan_4s.gpx")
        let cut = data.prefix(data.count / 2)
        let r = try GPXReader.read(cut, source: "cut.gpx")
        #expect(r.fixes.count > 100 && r.fixes.count < 413)
        #expect(r.diagnostics.skipped(.malformed) == 1)
        #expect(allSane(r.fixes))
    }
}
