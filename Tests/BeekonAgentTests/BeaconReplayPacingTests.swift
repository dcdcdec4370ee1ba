import Beekon
import BeekonBeacons
import BeekonSources
import BeekonTesting
import Foundation
import Logging
import Testing

@testable import BeekonAgent

/// `beekon track … --beacons CONFIG --beacon-source replay:FILE` follows `--speed` (SPEC BY-5,
/// SRC-4): the beacon replay waits on the track replay's real clock, here a `TestClock`, so
/// the pacing is proved by moving that clock, with no sleep.
@Suite struct BeaconReplayPacingTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A beacon heard at −50 dBm (power −59: well inside 1 m) once a second for `seconds` s.
    static func nearReadings(seconds: Int) -> [BeaconReading] {
        let identity = BeaconIdentity(uuid: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 2)!
        return (0..<seconds).map {
            BeaconReading(scanner: "s1", identity: identity, measuredPower: -59, rssi: -50, time: start.addingTimeInterval(Double($0)))
        }
    }

    static func feed(pace: ReplaySpeed, realClock: TestClock) -> BeaconFeed {
        var config = BeaconRangingConfig()
        config.rule = ProximityRule(enterDistance: 1, exitDistance: 2, dwell: 3, silenceTimeout: 30)
        var feed = BeaconFeed(source: .replay(path: "unused"), config: config, logger: Logger(label: "test"))
        feed.pace = pace
        feed.realClock = realClock
        return feed
    }

    static func withBeekon(_ body: (Beekon) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-pacing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.appendingPathComponent("agent.sqlite").path, provider: NoLocationProvider(),
                clock: TestClock(start: start)))
        try await body(beekon)
        await beekon.shutdown()
    }

    @Test(
        "BY-5, SRC-4: at 4× a 20 s beacon log takes 4.75 s of the replay's real clock; the entry is recorded only when its reading is due")
    func tenTimesFaster() async throws {
        try await Self.withBeekon { beekon in
            let real = TestClock(start: Date(timeIntervalSince1970: 2_000_000_000))
            let feed = Self.feed(pace: .multiplier(4), realClock: real)
            let run = Task { try await feed.replay(Self.nearReadings(seconds: 20), into: beekon) }
            var firstEntryStep: Int?
            // 19 gaps of 1 s recorded = 0.25 s real each (exact in binary); the replay waits before each reading.
            for step in 1...19 {
                await real.waitForSleepers(1)
                let stored = try await beekon.proximityEventHistory(from: .distantPast, to: .distantFuture)
                if firstEntryStep == nil, !stored.isEmpty { firstEntryStep = step }
                real.advance(by: .milliseconds(250))
            }
            let count = try await run.value
            #expect(count == 1)
            #expect(real.sleeperCount == 0)
            #expect(real.now() == Date(timeIntervalSince1970: 2_000_000_004.75))
            // The enter needs 5 samples (4 s of readings) and 3 s of dwell: never at the first reading.
            let step = try #require(firstEntryStep)
            #expect(step > 4 && step < 19)
        }
    }

    @Test("SRC-4: --speed max replays the beacon log without waiting on the real clock")
    func maxSpeedDoesNotWait() async throws {
        try await Self.withBeekon { beekon in
            let real = TestClock(start: Date(timeIntervalSince1970: 2_000_000_000))
            let feed = Self.feed(pace: .asFastAsPossible, realClock: real)
            let count = try await feed.replay(Self.nearReadings(seconds: 20), into: beekon)
            #expect(count == 1)
            #expect(real.now() == Date(timeIntervalSince1970: 2_000_000_000))
        }
    }
}
