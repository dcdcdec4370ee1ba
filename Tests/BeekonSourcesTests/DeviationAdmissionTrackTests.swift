import Beekon
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

/// BY-9 on every real recording: with `maxDeviationMeters` on, every fix the SDK accepted lies
/// within the tolerance of the stored polyline (the maximum, not a percentile), at any replay
/// pace, across a kill and resume; and the online result stays within 1.5× of offline
/// Douglas–Peucker at the same tolerance.
@Suite("Error-bounded admission on the real tracks (BY-9)")
struct DeviationAdmissionTrackTests {
    static let tracks = SharedData.gpxFiles + SharedData.nmeaFiles

    /// The fixes the SDK accepts: valid coordinates, strictly later (at millisecond precision).
    static func accepted(_ fixes: [RawFix]) -> [RawFix] {
        var out: [RawFix] = []
        for f in fixes where f.latitude.isFinite && f.longitude.isFinite && abs(f.latitude) <= 90 && abs(f.longitude) <= 180 {
            var g = f
            g.timestamp = WireTimestamp(f.timestamp).date
            if out.last.map({ g.timestamp > $0.timestamp }) ?? true { out.append(g) }
        }
        return out
    }

    static func maxError(_ fixes: [RawFix], _ line: [(Double, Double)]) -> Double {
        TrackDeviation.distances(from: fixes.map { ($0.latitude, $0.longitude) }, to: line).max() ?? 0
    }

    @Test(arguments: tracks, [10.0, 25.0])
    func everyAcceptedFixIsWithinTheTolerance(track: String, tolerance: Double) async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url(track)).fixes
        let config = BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: tolerance)
        let stored = try await GatePropertyTests.replay(fixes, config: config)
        let accepted = Self.accepted(fixes)
        #expect(Self.maxError(accepted, stored.map { ($0.latitude, $0.longitude) }) <= tolerance, "\(track)")
        #expect(stored.count < accepted.count, "\(track): \(stored.count) of \(accepted.count)")
    }

    @Test(arguments: SharedData.gpxFiles)
    func storesAtMostOneAndAHalfTimesOfflineDouglasPeucker(track: String) async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url(track)).fixes
        let stored = try await GatePropertyTests.replay(fixes, config: .faithful(maxDeviationMeters: 25))
        let accepted = Self.accepted(fixes)
        let dp = TrackDeviation.douglasPeucker(accepted.map { ($0.latitude, $0.longitude) }, tolerance: 25)
        #expect(Double(stored.count) <= 1.5 * Double(dp.count), "\(track): \(stored.count) vs Douglas–Peucker \(dp.count)")
        #expect(Self.maxError(accepted, stored.map { ($0.latitude, $0.longitude) }) <= 25)
    }

    @Test func paceDoesNotChangeWhatIsStored() async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url("gpx/gpxgo_visnjan_4s.gpx")).fixes
        let config = BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 25)
        let fast = try await GatePropertyTests.replay(fixes, config: config)
        let paced = try await GatePropertyTests.replay(fixes, config: config, speed: .multiplier(2000))
        #expect(fast.map(\.timestamp) == paced.map(\.timestamp))
        #expect(fast.map(\.latitude) == paced.map(\.latitude))
    }

    /// Killed (abandoned without stop) at several points of the bus track, then resumed by a
    /// new instance on the same database: the bound holds over the whole session.
    @Test(arguments: [137, 1000, 1801])
    func theBoundSurvivesAKillAndResume(at cut: Int) async throws {
        let fixes = Self.accepted(try TrackFile.read(contentsOf: SharedData.url("gpx/movingpandas_304_to_UL_bus_1hz.gpx")).fixes)
        let dir = NSTemporaryDirectory() + "beekon-admission-kill-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let clock = TestClock(start: fixes[0].timestamp)
        let p1 = ScriptedProvider()
        let p2 = ScriptedProvider()
        let first = Beekon(dependencies: BeekonDependencies(databasePath: dir + "/db.sqlite", provider: p1, clock: clock))
        try await first.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 25))
        try await first.start()
        await p1.send(Array(fixes[..<cut]))
        let second = Beekon(dependencies: BeekonDependencies(databasePath: dir + "/db.sqlite", provider: p2, clock: clock))
        #expect(try await second.resumeIfNeeded())
        await p2.send(Array(fixes[cut...]))
        try await second.stop()
        let stored = try await second.history(from: .distantPast, to: .distantFuture)
        #expect(Self.maxError(fixes, stored.map { ($0.latitude, $0.longitude) }) <= 25)
        #expect(Set(stored.map(\.id)).count == stored.count, "nothing stored twice")
    }
}
