import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("TrackFile")
struct TrackFileTests {
    @Test(
        "extensions pick the reader",
        arguments: [
            ("a.gpx", TrackFormat.gpx), ("a.GPX", .gpx), ("a.nmea", .nmea), ("a.log", .nmea),
            ("a.csv", .csv), ("a.ndjson", .ndjson), ("a.jsonl", .ndjson),
        ])
    func byExtension(_ name: String, _ format: TrackFormat) {
        #expect(TrackFile.detectFormat(name: name, data: Data("x".utf8)) == format)
    }

    @Test(
        "content sniffing when the extension says nothing",
        arguments: [
            ("\u{FEFF}  <?xml version=\"1.0\"?><gpx/>", TrackFormat?.some(.gpx)),
            ("{\"a\":1}\n", .ndjson),
            ("$GPGGA,…\n", .nmea),
            ("# comment\n$GPRMC\n", .nmea),
            ("time,lat,lon\n", .csv),
            ("hello world\n", nil),
            ("", nil),
        ])
    func sniffing(_ content: String, _ format: TrackFormat?) {
        #expect(TrackFile.detectFormat(name: "track.dat", data: Data(content.utf8)) == format)
    }

    @Test("every shared file reads through TrackFile with its own format")
    func allSharedFiles() throws {
        for file in SharedData.gpxFiles + SharedData.nmeaFiles {
            let r = try TrackFile.read(contentsOf: SharedData.url(file))
            #expect(r.diagnostics.format == (file.hasPrefix("gpx") ? .gpx : .nmea))
            #expect(!r.fixes.isEmpty)
        }
        // Sniffed by content from bytes with a neutral name.
        let data = try SharedData.data("nmea/gpsd_haicom-305N_walk.log")
        #expect(try TrackFile.read(data, name: "walk.txt").fixes.count == 68)
    }

    @Test("unknown format, missing file and directory give one-line errors")
    func errors() {
        let e1 = #expect(throws: TrackReadError.self) { try TrackFile.read(Data("hello".utf8), name: "x.bin") }
        #expect(e1 == .unknownFormat(file: "x.bin"))
        #expect(e1?.description.contains(".gpx") == true)
        let missing = URL(fileURLWithPath: "/nonexistent/dir/track.gpx")
        let e2 = #expect(throws: TrackReadError.self) { try TrackFile.read(contentsOf: missing) }
        guard case .unreadable? = e2 else {
            Issue.record("expected unreadable, got \(String(describing: e2))")
            return
        }
        #expect(e2?.description.hasPrefix("/nonexistent/dir/track.gpx: cannot read the file") == true)
        let e3 = #expect(throws: TrackReadError.self) { try TrackFile.read(contentsOf: SharedData.url("gpx")) }
        #expect(e3?.description.contains("directory") == true)
        #expect(e3?.locationProviderError == .failed(e3?.description ?? ""))
    }

    @Test("a forced format overrides the extension")
    func forced() throws {
        let url = SharedData.url("nmea/derived_apple_watch_walk.nmea")
        let e = #expect(throws: TrackReadError.self) { try TrackFile.read(contentsOf: url, format: .gpx) }
        guard case .notATrack(_, .gpx, _)? = e else {
            Issue.record("expected notATrack")
            return
        }
    }
}
