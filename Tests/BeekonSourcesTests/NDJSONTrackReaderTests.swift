import BeekonWire
import Foundation
import Testing
import Beekon
@testable import BeekonSources

@Suite("NDJSON reader")
struct NDJSONTrackReaderTests {
    @Test("schema-v1 history lines are replayable; other keys ignored")
    func history() throws {
        let text = """
            {"id":"0190a0a0-0000-7000-8000-000000000001","session_id":"s1","timestamp":"2026-06-15T12:34:56.789Z","trigger":"interval","motion":"moving","is_mock":false,"latitude":52.52,"longitude":13.405,"accuracy":5,"speed":1.5,"bearing":270,"altitude":34.5,"activity":"walking"}
            {"timestamp":"2026-06-15T12:35:56.789Z","latitude":52.53,"longitude":13.406,"is_mock":true,"extra":{"nested":[1,2]}}

            {"timestamp":1781526957,"latitude":-1,"longitude":-2}
            """
        let r = try NDJSONTrackReader.read(Data(text.utf8))
        #expect(r.fixes.count == 3)
        let f = r.fixes[0]
        #expect(WireTimestamp(f.timestamp).description == "2026-06-15T12:34:56.789Z")
        #expect(f.latitude == 52.52 && f.longitude == 13.405)
        #expect(f.accuracy == 5 && f.speed == 1.5 && f.bearing == 270 && f.altitude == 34.5)
        #expect(f.activity == .walking && !f.isMock)
        #expect(r.fixes[1].isMock)
        #expect(r.diagnostics.records == 3)
    }

    @Test("bad lines are skipped and counted; garbage gives no fix")
    func badLines() throws {
        let text = """
            {"timestamp":"2026-06-15T12:34:56Z","latitude":1,"longitude":2}
            {"timestamp":"2026-06-15T12:34:57Z","latitude":true,"longitude":2}
            {"timestamp":"2026-06-15T12:34:58Z","latitude":"1","longitude":2}
            {"latitude":1,"longitude":2}
            {"timestamp":"soon","latitude":1,"longitude":2}
            {"timestamp":"2026-06-15T12:34:59Z","latitude":100,"longitude":2}
            [1,2,3]
            {"timestamp":
            not json at all
            """
        let r = try NDJSONTrackReader.read(Data(text.utf8), source: "h.ndjson")
        #expect(r.fixes.count == 1)
        let d = r.diagnostics
        #expect(d.skipped(.badCoordinate) == 3)
        #expect(d.skipped(.missingTime) == 1)
        #expect(d.skipped(.badTime) == 1)
        #expect(d.skipped(.malformed) == 3)
        #expect(d.problems.contains("line 7: not a JSON object"))
    }

    @Test("no JSON object at all: notATrack; objects without fixes: noFixes")
    func errors() {
        let e1 = #expect(throws: TrackReadError.self) { try NDJSONTrackReader.read(Data("hello\n[]\n".utf8), source: "x.jsonl") }
        #expect(e1?.description == "x.jsonl: not an NDJSON track: no line is a JSON object; first problem: line 1: not a JSON object")
        let e2 = #expect(throws: TrackReadError.self) { try NDJSONTrackReader.read(Data("{\"a\":1}\n".utf8), source: "y.ndjson") }
        guard case .noFixes? = e2 else {
            Issue.record("expected noFixes")
            return
        }
        let e3 = #expect(throws: TrackReadError.self) { try NDJSONTrackReader.read(Data("\n \n".utf8), source: "z.ndjson") }
        #expect(e3?.description.contains("empty") == true)
    }
}
