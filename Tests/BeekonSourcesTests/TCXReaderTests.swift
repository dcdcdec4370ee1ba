import Foundation
import Testing
import Beekon
@testable import BeekonSources

/// TCX (Garmin Training Center XML) as a replay format (SRC-4): real exports and edge cases.
@Suite("TCX reader")
struct TCXReaderTests {
    /// `<Trackpoint>` blocks with a `<LatitudeDegrees>`, by plain text search (independent of XMLParser).
    static func positioned(_ text: String) -> (all: Int, withPosition: Int) {
        let blocks = text.components(separatedBy: "<Trackpoint>").dropFirst()
        return (
            blocks.count, blocks.filter { ($0.components(separatedBy: "</Trackpoint>").first ?? "").contains("<LatitudeDegrees>") }.count
        )
    }

    @Test(
        "SRC-4: real TCX exports give one fix per positioned Trackpoint",
        arguments: [
            "labelled/cycling/gpsa_biking-01.tcx", "labelled/cycling/tcxreader_mapmyride-biking.tcx",
            "labelled/running/gpsa_running-05.tcx",
        ])
    func realFiles(_ file: String) throws {
        let counts = Self.positioned(String(decoding: try SharedData.data(file), as: UTF8.self))
        let result = try TrackFile.read(contentsOf: SharedData.url(file))
        #expect(counts.withPosition > 300)
        #expect(result.diagnostics.format == .tcx)
        #expect(result.diagnostics.records == counts.all)
        #expect(result.fixes.count == counts.withPosition)
        #expect(result.diagnostics.skipped(.badCoordinate) == counts.all - counts.withPosition)
        #expect(result.fixes.allSatisfy { abs($0.latitude) <= 90 && abs($0.longitude) <= 180 && $0.altitude != nil })
        #expect(zip(result.fixes, result.fixes.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }

    @Test("SRC-4: fields of a Trackpoint: position, time with offset, altitude, TPX speed")
    func fields() throws {
        let tcx = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"
              xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
             <Activities><Activity Sport="Biking"><Lap StartTime="2024-05-01T10:00:00Z"><Track>
              <Trackpoint><Time>2024-05-01T12:00:00+02:00</Time>
               <Position><LatitudeDegrees>46.5</LatitudeDegrees><LongitudeDegrees>7.25</LongitudeDegrees></Position>
               <AltitudeMeters>512.5</AltitudeMeters><HeartRateBpm><Value>120</Value></HeartRateBpm>
               <Extensions><ns3:TPX><ns3:Speed>6.5</ns3:Speed></ns3:TPX></Extensions></Trackpoint>
              <Trackpoint><Time>2024-05-01T10:00:01Z</Time><HeartRateBpm><Value>121</Value></HeartRateBpm></Trackpoint>
              <Trackpoint><Position><LatitudeDegrees>46.6</LatitudeDegrees><LongitudeDegrees>7.3</LongitudeDegrees></Position></Trackpoint>
             </Track></Lap></Activity></Activities>
            </TrainingCenterDatabase>
            """
        let r = try TCXReader.read(Data(tcx.utf8), source: "x.tcx")
        #expect(r.fixes.count == 1)
        let f = try #require(r.fixes.first)
        #expect(f.timestamp == Date(timeIntervalSince1970: 1_714_557_600))
        #expect(f.latitude == 46.5 && f.longitude == 7.25)
        #expect(f.altitude == 512.5)
        #expect(f.speed == 6.5)
        #expect(r.diagnostics.records == 3)
        #expect(r.diagnostics.skipped(.badCoordinate) == 1)
        #expect(r.diagnostics.skipped(.missingTime) == 1)
    }

    @Test("SRC-4: TCX is detected by extension and by its root element; a GPX is not a TCX")
    func detection() throws {
        #expect(TrackFile.detectFormat(name: "ride.TCX", data: Data()) == .tcx)
        let root = Data("<?xml version=\"1.0\"?>\n<TrainingCenterDatabase xmlns=\"x\"/>".utf8)
        #expect(TrackFile.detectFormat(name: "ride.xml", data: root) == .tcx)
        let gpx = try SharedData.data("gpx/gpxgo_visnjan_4s.gpx")
        let error = #expect(throws: TrackReadError.self) { try TCXReader.read(gpx, source: "v.tcx") }
        #expect(
            error?.description.contains("not a TCX track: the root element is <gpx>, not <TrainingCenterDatabase>") == true,
            "\(String(describing: error))")
        let cut = Data("<TrainingCenterDatabase><Activities><Activity><Lap><Track><Trackpoint><Time>".utf8)
        #expect(throws: TrackReadError.self) { try TCXReader.read(cut, source: "cut.tcx") }
    }
}
