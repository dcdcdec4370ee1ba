import Foundation
import Testing
@testable import BeekonBeacons

/// The real recordings of Tests/Data/beacons (SPEC BY-5).
@Suite struct RecordingTests {
    /// The settings under which the two-scanner run is replayed (also `beekon beacons`' example in the README):
    /// the Pi scanners' dongles hear a beacon on the next desk ~30 dB below the beacons' 1 m power,
    /// so "near" is 6 m by the default curve fit (about −89 dBm for these −62 dBm beacons).
    static func twoScannerTracker() -> ProximityTracker {
        ProximityTracker(
            regions: [], rule: ProximityRule(enterDistance: 6, exitDistance: 8, dwell: 3, silenceTimeout: 30),
            smoother: RSSISmoother(window: 10, trimFraction: 0.2, minimumSamples: 5))
    }

    static func twoScannerEvents() throws -> [ProximityEvent] {
        let result = BeaconRecording.read(contentsOf: BeaconData.twoScanners)
        #expect(result.errorCount == 0, "\(result.messages)")
        #expect(result.readings.count == 39_802)
        var tracker = twoScannerTracker()
        return BeaconReplay.events(of: result.readings, tracker: &tracker)
    }

    @Test(
        "BY-5: starksm64 two-scanner run — beacons on a scanner stay inside its proximity and never enter at the other; minor 1 enters Room202 and ends in Room201"
    )
    func twoScanners() throws {
        let events = try Self.twoScannerEvents()
        let start = Date(timeIntervalSince1970: 1_425_417_360.553)
        func of(_ minor: Int, _ scanner: String) -> [ProximityEvent] {
            events.filter { $0.identity.minor == minor && $0.scanner == scanner }
        }
        // Minor 3 sits on the Room201 scanner, minor 4 on Room202's: one enter in the first 30 s, never an exit.
        for (minor, home, away) in [(3, "Room201", "Room202"), (4, "Room202", "Room201")] {
            let own = of(minor, home)
            #expect(own.map(\.type) == [.enter], "minor \(minor) at \(home): \(own)")
            #expect(own.first.map { $0.timestamp.timeIntervalSince(start) < 30 } == true)
            #expect(of(minor, away).isEmpty, "minor \(minor) at \(away): \(of(minor, away))")
        }
        // Minor 1 is carried: it enters Room202 and, after that, its last entry is Room201's.
        let carried = events.filter { $0.identity.minor == 1 }
        let timeline = carried.map { "\(Int($0.timestamp.timeIntervalSince(start)))s \($0.scanner) \($0.type.rawValue)" }
        let room202 = try #require(carried.firstIndex { $0.scanner == "Room202" && $0.type == .enter }, "\(timeline)")
        let lastEnter = try #require(carried.last { $0.type == .enter })
        #expect(lastEnter.scanner == "Room201", "\(timeline)")
        #expect(lastEnter.timestamp >= carried[room202].timestamp)
        // Every entry is closed by an exit before the next entry at the same scanner (once per entry).
        for scanner in ["Room201", "Room202"] {
            let types = carried.filter { $0.scanner == scanner }.map(\.type)
            #expect(zip(types, types.dropFirst()).allSatisfy { $0 != $1 }, "\(scanner): \(types)")
        }
    }

    @Test("BY-5: the --scanner filter keeps one scanner's view of the run")
    func scannerFilter() throws {
        let result = BeaconRecording.read(contentsOf: BeaconData.twoScanners)
        var tracker = Self.twoScannerTracker()
        let events = BeaconReplay.events(of: result.readings, scanner: "Room202", tracker: &tracker)
        #expect(!events.isEmpty && events.allSatisfy { $0.scanner == "Room202" })
        #expect(events.contains { $0.identity.minor == 4 && $0.type == .enter })
    }

    @Test("BY-5: the four-scanner run reads cleanly and beacon 5 enters at more than one scanner")
    func fourScanners() throws {
        let result = BeaconRecording.read(contentsOf: BeaconData.fourScanners)
        #expect(result.errorCount == 0 && !result.readings.isEmpty)
        #expect(Set(result.readings.map(\.scanner)).count == 4)
        var tracker = Self.twoScannerTracker()
        let enters = BeaconReplay.events(of: result.readings, tracker: &tracker).filter { $0.type == .enter }
        #expect(Set(enters.map(\.scanner)).count >= 2, "\(enters.map(\.scanner))")
    }
}
