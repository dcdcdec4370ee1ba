import BeekonWire
import Beekon
import BeekonPrimitives
import BeekonSources
import Foundation
import Testing

/// FX-2 on real recordings: every pair of consecutive admitted fixes satisfies BOTH gate
/// conditions, timestamps strictly increase, and the pace of a replay does not change
/// which fixes are admitted (time is fix time, not wall time).
@Suite("Gate properties on the real tracks (FX-2, FX-3, SRC-4)")
struct GatePropertyTests {
    static let tracks = SharedData.gpxFiles + SharedData.nmeaFiles

    static func replay(_ fixes: [RawFix], config: BeekonConfig, speed: ReplaySpeed = .asFastAsPossible) async throws -> [Location] {
        let dir = NSTemporaryDirectory() + "beekon-gateprop-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = ReplayClock()
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir + "/db.sqlite", provider: ReplayProvider(fixes: fixes, speed: speed, clock: clock), clock: clock))
        try await beekon.configure(config)
        try await beekon.start()
        await beekon.waitUntilSourceEnds()
        try await beekon.stop()
        return try await beekon.history(from: .distantPast, to: .distantFuture)
    }

    static func distance(_ a: Location, _ b: Location) -> Double {
        Geodesy.distance(a.latitude, a.longitude, b.latitude, b.longitude)
    }

    @Test(arguments: tracks, Preset.allCases)
    func consecutiveAdmittedFixesSatisfyBothConditions(track: String, preset: Preset) async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url(track)).fixes
        let stored = try await Self.replay(fixes, config: BeekonConfig(preset: preset, whenStationary: .keepTracking))
        #expect(!stored.isEmpty)
        #expect(stored.first?.timestamp == fixes.first.map { WireTimestamp($0.timestamp).date }, "the first fix always passes")
        for (a, b) in zip(stored, stored.dropFirst()) {
            let dt = b.timestamp.timeIntervalSince(a.timestamp)
            #expect(dt >= preset.minTimeBetweenLocationsSeconds, "\(track): \(dt) s between admitted fixes")
            #expect(Self.distance(a, b) >= preset.minDistanceBetweenLocationsMeters * 0.999, "\(track): \(Self.distance(a, b)) m")
        }
    }

    @Test(arguments: tracks)
    func turnAwareAdmissionStillRespectsItsMinimumTime(track: String) async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url(track)).fixes
        let config = BeekonConfig(whenStationary: .keepTracking, turnThresholdDegrees: 30, turnMinTimeSeconds: 5)
        let stored = try await Self.replay(fixes, config: config)
        let plain = try await Self.replay(fixes, config: BeekonConfig(whenStationary: .keepTracking))
        #expect(stored.count >= plain.count, "turns only add fixes")
        for (a, b) in zip(stored, stored.dropFirst()) {
            #expect(b.timestamp.timeIntervalSince(a.timestamp) >= 5)
        }
    }

    @Test func paceDoesNotChangeWhatIsAdmitted() async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url("gpx/gpxgo_visnjan_4s.gpx")).fixes
        let config = BeekonConfig(preset: .precision, whenStationary: .keepTracking)
        let fast = try await Self.replay(fixes, config: config)
        let paced = try await Self.replay(fixes, config: config, speed: .multiplier(2000))
        #expect(fast.map(\.timestamp) == paced.map(\.timestamp))
        #expect(fast.map(\.latitude) == paced.map(\.latitude))
    }
}
