import BeekonWire
import Beekon
import BeekonPrimitives
import BeekonSources
import Foundation
import Testing

/// GF-2/GF-3 and FX-6 on real recordings, replayed through the real SDK.
@Suite("Geofences and stationary handling on replayed real tracks")
struct ReplayGeofenceStationaryTests {
    /// Forwards to a replay and records every power-mode request.
    actor RecordingProvider: LocationProvider {
        let inner: ReplayProvider
        private(set) var modes: [PowerMode] = []
        init(_ inner: ReplayProvider) { self.inner = inner }
        func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
            modes.append(mode)
            return try await inner.start(mode: mode)
        }
        func setPowerMode(_ mode: PowerMode) async {
            modes.append(mode)
            await inner.setPowerMode(mode)
        }
        func stop() async { await inner.stop() }
    }

    static func run(_ fixes: [RawFix], config: BeekonConfig, fences: [Geofence] = [], speed: ReplaySpeed = .asFastAsPossible)
        async throws -> (Beekon, RecordingProvider, String)
    {
        let dir = NSTemporaryDirectory() + "beekon-replay-gf-" + UUID().uuidString
        let clock = ReplayClock()
        let provider = RecordingProvider(ReplayProvider(fixes: fixes, speed: speed, clock: clock))
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: dir + "/db.sqlite", provider: provider, clock: clock))
        try await beekon.configure(config)
        try await beekon.addGeofences(fences)
        try await beekon.start()
        await beekon.waitUntilSourceEnds()
        try await beekon.stop()
        return (beekon, provider, dir)
    }

    @Test(arguments: ["gpx/movingpandas_304_to_UL_bus_1hz.gpx", "gpx/togeojson_apple_watch_walk_1hz.gpx"])
    func crossingsMatchAnIndependentComputation(track: String) async throws {
        let fixes = try TrackFile.read(contentsOf: SharedData.url(track)).fixes
        // Fences centred on the route, plus one the route passes near the edge of.
        let fences = stride(from: fixes.count / 6, to: fixes.count, by: fixes.count / 4).enumerated().map { i, k in
            Geofence(id: "f\(i)", latitude: fixes[k].latitude, longitude: fixes[k].longitude, radiusMeters: [60.0, 150, 40, 100][i % 4])
        }
        let (beekon, _, dir) = try await Self.run(fixes, config: BeekonConfig(whenStationary: .keepTracking), fences: fences)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let events = try await beekon.geofenceEventHistory(from: .distantPast, to: .distantFuture)
        // The documented rule, computed here from each raw fix: h = max(5, accuracy);
        // enter when d ≤ r − min(h, r/2); exit when d > r + h; otherwise unchanged.
        var inside = Set<String>()
        var expected: [String] = []
        for f in fixes {
            let h = max(5, f.accuracy ?? 0)
            for g in fences.sorted(by: { $0.id < $1.id }) {
                let d = Geodesy.distance(f.latitude, f.longitude, g.latitude, g.longitude)
                if inside.contains(g.id), d > g.radiusMeters + h {
                    inside.remove(g.id)
                    expected.append("\(g.id) exit \(WireTimestamp(f.timestamp))")
                } else if !inside.contains(g.id), d <= g.radiusMeters - min(h, g.radiusMeters / 2) {
                    inside.insert(g.id)
                    expected.append("\(g.id) enter \(WireTimestamp(f.timestamp))")
                }
            }
        }
        let got = events.map { "\($0.geofenceId) \($0.transition.rawValue) \(WireTimestamp($0.timestamp))" }
        #expect(!expected.isEmpty)
        #expect(got.sorted() == expected.sorted())
        let crossingFixes = try await beekon.history(from: .distantPast, to: .distantFuture).filter { $0.trigger == .geofence }
        #expect(!crossingFixes.isEmpty, "crossings are recorded as fixes with trigger geofence")
    }

    @Test func aLongStopPausesChecksInWithTheCachedPositionAndDepartsWithAMotionFix() async throws {
        let walk = try TrackFile.read(contentsOf: SharedData.url("gpx/togeojson_apple_watch_walk_1hz.gpx")).fixes
        // The real walk, with a 40-minute stop inserted after its 300th fix (1 Hz, ±1 m jitter).
        // Replayed at 100×: a check-in's store (an fsync) that takes 0.5 s of real time moves the
        // replay on by 50 s. At 400× a full-suite run on a loaded 2-core machine starved the
        // check-in timer through the whole stop (0 check-ins, the test 6× slower than alone);
        // at 100× the stop lasts 24 s of real time, room for several even then; ≥ 2 are asserted.
        let stopSeconds = 2400
        let stop = walk[299]
        var fixes = Array(walk.prefix(300))
        var rng = SystemRandomNumberGenerator()
        for s in 1...stopSeconds {
            fixes.append(
                RawFix(
                    timestamp: stop.timestamp.addingTimeInterval(Double(s)),
                    latitude: stop.latitude + Double.random(in: -1...1, using: &rng) / 111_195,
                    longitude: stop.longitude, accuracy: 5))
        }
        let shift = Double(stopSeconds + 1)
        fixes += walk[300...].map {
            var f = $0
            f.timestamp = f.timestamp.addingTimeInterval(shift)
            return f
        }
        let config = BeekonConfig(whenStationary: .pauseWithCheckIns, checkInIntervalSeconds: 300)
        let (beekon, provider, dir) = try await Self.run(fixes, config: config, speed: .multiplier(100))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let modes = await provider.modes
        #expect(modes.first == .balanced && modes.contains(.paused), "paused while stationary: \(modes)")
        #expect(modes.last == .balanced, "resumed on departure: \(modes)")
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        let checkIns = rows.filter { $0.trigger == .checkIn }
        #expect(checkIns.count >= 2, "check-ins every 300 s during a 40-minute stop: \(checkIns.count)")
        for c in checkIns {
            #expect(Geodesy.distance(c.latitude, c.longitude, stop.latitude, stop.longitude) < 3, "cached coordinates")
            #expect(c.motion == .stationary)
        }
        let departure = try #require(rows.first { $0.trigger == .motion })
        #expect(departure.timestamp > stop.timestamp.addingTimeInterval(Double(stopSeconds)))
        #expect(rows.filter { $0.trigger == .checkIn }.map(\.timestamp) == checkIns.map(\.timestamp).sorted())
    }
}
