import BeekonWire
import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("CSV reader")
struct CSVTrackReaderTests {
    static func csv(_ text: String) throws -> TrackReadResult {
        try CSVTrackReader.read(Data(text.utf8), source: "t.csv")
    }

    @Test("header aliases, quoted fields, optional columns, ISO and epoch times")
    func basic() throws {
        let r = try Self.csv(
            """
            "Timestamp",Latitude,lng,Accuracy,speed,Course,ele,note,is_mock
            2024-05-01T10:00:00Z,48.1,11.5,4.5,1.25,90,520,"a, ""quoted"" note",false
            2024-05-01T10:00:01.250+02:00,48.2,11.6,,,,,"multi
            line",true
            1714557602,48.3,11.7,,,,,,
            1714557603000,48.4,11.8,,,,,,

            """)
        #expect(r.fixes.count == 4)
        #expect(r.diagnostics.skipped == 0)
        let f = r.fixes[0]
        #expect(f.latitude == 48.1 && f.longitude == 11.5)
        #expect(f.accuracy == 4.5 && f.speed == 1.25 && f.bearing == 90 && f.altitude == 520)
        #expect(!f.isMock && r.fixes[1].isMock)
        #expect(WireTimestamp(r.fixes[1].timestamp).description == "2024-05-01T08:00:01.250Z")
        #expect(WireTimestamp(r.fixes[2].timestamp).description == "2024-05-01T10:00:02.000Z")
        #expect(WireTimestamp(r.fixes[3].timestamp).description == "2024-05-01T10:00:03.000Z")
        #expect(r.fixes[2].accuracy == nil)
    }

    @Test("semicolon-separated with CRLF and a BOM")
    func semicolons() throws {
        let r = try CSVTrackReader.read(Data("\u{FEFF}time;lat;lon\r\n2024-05-01T10:00:00Z;1.5;2.5\r\n".utf8))
        #expect(r.fixes.count == 1)
        #expect(r.fixes[0].longitude == 2.5)
    }

    @Test("bad rows are skipped and counted, with line numbers")
    func badRows() throws {
        let r = try Self.csv(
            """
            time,lat,lon
            2024-05-01T10:00:00Z,1,2
            2024-05-01T10:00:01Z,NaN,2
            2024-05-01T10:00:02Z,91,2
            2024-05-01T10:00:03Z,1
            not a time,1,2
            ,1,2
            2024-05-01T10:00:04Z,1,inf
            2024-05-01T10:00:05Z,1e999,2
            2024-05-01T10:00:06Z,"1,2
            """)
        #expect(r.fixes.count == 1)
        let d = r.diagnostics
        #expect(d.records == 9)
        #expect(d.skipped(.badCoordinate) == 4)
        #expect(d.skipped(.malformed) == 2)
        #expect(d.skipped(.badTime) == 1)
        #expect(d.skipped(.missingTime) == 1)
        #expect(d.problems.contains { $0.hasPrefix("line 3: invalid latitude") })
    }

    @Test("not a track: no header columns, empty, header only, all rows bad")
    func notATrack() {
        let e1 = #expect(throws: TrackReadError.self) { try Self.csv("a,b,c\n1,2,3\n") }
        #expect(e1?.description == "t.csv: not a CSV track: line 1: the header (a,b,c) has no lat/latitude and lon/lng/longitude columns")
        let e2 = #expect(throws: TrackReadError.self) { try Self.csv("lat,lon\n1,2\n") }
        #expect(e2?.description.contains("no time/timestamp column") == true)
        let e3 = #expect(throws: TrackReadError.self) { try Self.csv("") }
        #expect(e3?.description.contains("empty") == true)
        let e4 = #expect(throws: TrackReadError.self) { try Self.csv("time,lat,lon\n") }
        #expect(e4?.description.contains("no data rows") == true)
        let e5 = #expect(throws: TrackReadError.self) { try Self.csv("time,lat,lon\nx,y,z\n") }
        guard case .noFixes(let file, let d)? = e5 else {
            Issue.record("expected noFixes")
            return
        }
        #expect(file == "t.csv" && d.skipped == 1)
        #expect(
            e5?.description
                == "t.csv: no usable fix in 1 CSV records (1 bad coordinate); first problem: line 2: invalid latitude/longitude \"y\", \"z\""
        )
    }
}
