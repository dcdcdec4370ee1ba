import Beekon
import BeekonSources
import BeekonTesting
import Foundation
import Testing

/// BY-4 on the real walk, through the real SDK: a profile switch mid-walk and the foreground
/// heartbeat during the walk's final stationary minutes.
@Suite("Profiles and heartbeat on the real walk (BY-4)")
struct ProfileReplayTests {
    static func walk() throws -> [RawFix] {
        let fixes = try GPXReader.read(contentsOf: SharedData.url("gpx/togeojson_apple_watch_walk_1hz.gpx")).fixes
        var ordered: [RawFix] = []
        for f in fixes where ordered.last.map({ f.timestamp > $0.timestamp }) ?? true { ordered.append(f) }
        return ordered
    }

    static func sdk(_ config: BeekonConfig, start: Date) async throws -> (Beekon, ScriptedProvider, String) {
        let dir = NSTemporaryDirectory() + "beekon-profile-" + UUID().uuidString
        let provider = ScriptedProvider()
        let beekon = Beekon(
            dependencies: BeekonDependencies(databasePath: dir + "/db.sqlite", provider: provider, clock: TestClock(start: start)))
        try await beekon.configure(config)
        try await beekon.start()
        return (beekon, provider, dir)
    }

    @Test("BY-4, LC-8: foreground → background mid-walk changes the admitted cadence from the next fix on")
    func switchMidWalk() async throws {
        let fixes = try Self.walk()
        let config = BeekonConfig(
            whenStationary: .keepTracking,
            foregroundProfile: .foreground,  // 20 s and 25 m
            backgroundProfile: LocationProfile(preset: .saver, minTimeBetweenLocationsSeconds: 60, minDistanceBetweenLocationsMeters: 75))
        let (beekon, provider, dir) = try await Self.sdk(config, start: fixes[0].timestamp)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let half = 700  // mid-walk, still moving at ~1.5 m/s
        await provider.send(Array(fixes[..<half]))
        try await beekon.setAppState(.background)
        #expect(await provider.powerModes.last == .low, "the source gets the background preset's power mode")
        await provider.send(Array(fixes[half...]))
        try await beekon.stop()
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        let switchAt = fixes[half].timestamp
        let before = stored.filter { $0.timestamp < switchAt }
        let after = stored.filter { $0.timestamp >= switchAt }
        func gaps(_ l: [Location]) -> [Double] { zip(l, l.dropFirst()).map { $1.timestamp.timeIntervalSince($0.timestamp) } }
        let beforeGaps = gaps(before)
        let afterGaps = gaps([before.last!] + after)
        #expect(
            beforeGaps.allSatisfy { $0 >= 20 } && beforeGaps.filter { $0 < 60 }.count > beforeGaps.count / 2,
            "foreground gaps \(beforeGaps)")
        #expect(afterGaps.allSatisfy { $0 >= 60 }, "from the next fix on, the background gate: \(afterGaps)")
        #expect(after.count >= 3 && before.count >= 10, "\(before.count) before, \(after.count) after")
        let log = try await beekon.diagnosticLog()
        #expect(
            log.contains {
                $0.message == "profile switched" && $0.metadata["app_state"] == "background" && $0.metadata["preset"] == "saver"
            })
    }

    @Test("BY-4: the foreground heartbeat admits a fix every 30 s during the walk's final stationary minutes")
    func heartbeatDuringTheFinalStop() async throws {
        let fixes = try Self.walk()
        let stop = fixes.count - 360  // the last six minutes: the walker stands (median speed ~0.1 m/s)
        for heartbeat in [30.0, nil] {
            // 20 s / 25 m, heartbeat 30 s; stationary: pause, with a radius the standing walker's GPS stays within.
            var config = BeekonConfig(stationaryRadiusMeters: 30, foregroundProfile: .foreground)
            config.foregroundProfile?.heartbeatSeconds = heartbeat
            let (beekon, provider, dir) = try await Self.sdk(config, start: fixes[0].timestamp)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            await provider.send(fixes)
            try await beekon.stop()
            let stored = try await beekon.history(from: fixes[stop].timestamp, to: .distantFuture)
            let times = stored.map { $0.timestamp.timeIntervalSince(fixes[stop].timestamp) }
            let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
            if heartbeat != nil {
                #expect(stored.count >= 11, "one fix per 30 s over 6 minutes: \(times)")
                #expect(gaps.allSatisfy { $0 <= 31 }, "never more than the heartbeat (+1 s fix spacing): \(gaps)")
                #expect(await provider.powerModes.contains(.paused), "heartbeats while the source is paused")
            } else {
                #expect(stored.count <= 4, "without the heartbeat the gate stores (almost) nothing while standing: \(times)")
            }
        }
    }
}
