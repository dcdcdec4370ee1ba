import Beekon
import BeekonTesting
import BeekonWire
import Foundation
import Testing

/// BY-9 through the real `Beekon` actor on an on-disk database: the bound across
/// configuration changes, a process killed with a window open, and the composition with
/// geofences, the stationary pause and `positions` (FX-6, FX-7).
@Suite("Error-bounded admission in the SDK (BY-9, FX-6, FX-7)", .timeLimit(.minutes(2)))
struct BeekonAdmissionTests {
    let t0 = TestClock().now()

    func north(_ s: Double, _ metres: Double, east: Double = 0) -> RawFix {
        RawFix(
            timestamp: t0.addingTimeInterval(s), latitude: 48 + metres / 111_195,
            longitude: 11 + east / (111_195 * cos(48 * Double.pi / 180)), accuracy: 5)
    }

    func all(_ b: Beekon) async throws -> [Location] { try await b.history(from: .distantPast, to: .distantFuture) }

    /// The kill: `first` is abandoned mid-window (no stop, no flush), like a process killed with
    /// SIGKILL; a second instance on the same file resumes with a new source.
    @Test func aFixHeldWhenTheProcessIsKilledIsStoredOnResume() async throws {
        let h = Harness()
        let first = h.beekon()
        try await first.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        try await first.start()
        let before = (0..<30).map { north(Double($0), Double($0) * 10) }  // straight north: held
        await h.provider.send(before)
        #expect(try await all(first).count == 1, "only the first fix is stored; the rest is held")

        let provider = ScriptedProvider()
        let second = Beekon(dependencies: BeekonDependencies(databasePath: h.dir.db, provider: provider, clock: h.clock))
        #expect(try await second.resumeIfNeeded())
        let after = (1...30).map { north(Double(40 + $0), 0, east: Double($0) * 10) }  // then east from the start
        await provider.send(after)
        try await second.stop()
        let stored = try await all(second)
        #expect(stored.contains { $0.timestamp == before.last!.timestamp }, "the held fix was stored on resume")
        #expect(Set(stored.map(\.sessionId)).count == 1)
        #expect(maxDeviation(before + after, stored) <= 10)
    }

    @Test func startAfterAKillStoresTheHeldFixInItsOwnSession() async throws {
        let h = Harness()
        let first = h.beekon()
        try await first.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        try await first.start()
        let session = try #require(await first.sessionID)
        await h.provider.send((0..<10).map { north(Double($0), Double($0) * 10) })
        let second = Beekon(dependencies: BeekonDependencies(databasePath: h.dir.db, provider: ScriptedProvider(), clock: h.clock))
        try await second.start()
        let stored = try await all(second)
        #expect(stored.map(\.sessionId) == [session, session])
        #expect(stored.last?.timestamp == north(9, 90).timestamp)
        try await second.stop()
        #expect(try await all(second).count == 2, "stored once, not again at the next start")
    }

    @Test(arguments: [3, 11])
    func everyFixIsWithinTheToleranceItWasTakenWithAcrossConfigurationChanges(seed: Int) async throws {
        let h = Harness()
        let beekon = h.beekon()
        let fixes = randomWalk(seed: UInt64(seed), count: 1200)
        let plan: [(Range<Int>, Double?)] = [(0..<300, 25), (300..<600, 5), (600..<900, nil), (900..<1200, 40)]
        try await beekon.start()
        for (range, tolerance) in plan {
            try await beekon.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: tolerance))
            await h.provider.send(Array(fixes[range]))
        }
        try await beekon.stop()
        let stored = try await all(beekon)
        for (range, tolerance) in plan {
            guard let tolerance else { continue }
            #expect(maxDeviation(Array(fixes[range]), stored) <= tolerance, "\(range) at \(tolerance) m")
        }
    }

    @Test func positionsEmitsExactlyTheStoredFixesInOrder() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 15))
        var emitted = beekon.positions.makeAsyncIterator()
        try await beekon.start()
        let fixes = randomWalk(seed: 7, count: 600)
        await h.provider.send(fixes)
        try await beekon.stop()
        let stored = try await all(beekon)
        var ids: [UUID] = []
        for _ in stored { if let l = await emitted.next() { ids.append(l.id) } }
        #expect(ids == stored.map(\.id))
        #expect(maxDeviation(fixes, stored) <= 15)
    }

    @Test func aGeofenceCrossingIsStoredAtOnceInsideAWindow() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 25))
        try await beekon.addGeofences([Geofence(id: "home", latitude: 48, longitude: 11, radiusMeters: 200)])
        try await beekon.start()
        let fixes = (0..<100).map { north(Double($0), -1000 + Double($0) * 20) }  // straight through the fence
        await h.provider.send(fixes)
        try await beekon.stop()
        let stored = try await all(beekon)
        #expect(stored.filter { $0.trigger == .geofence }.count == 2, "enter and exit fixes stored")
        #expect(stored.count <= 5, "a straight line otherwise keeps its ends: \(stored.count)")
        #expect(try await beekon.geofenceEventHistory(from: .distantPast, to: .distantFuture).count == 2)
        #expect(maxDeviation(fixes, stored) <= 25)
    }

    @Test func theStationaryPauseStoresTheHeldFixThenPauses() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(whenStationary: .pause, maxDeviationMeters: 25))
        try await beekon.start()
        var sent: [RawFix] = []
        for s in 0..<400 {
            let f = s < 60 ? north(Double(s), Double(s) * 10) : north(Double(s), 600 + Double(s % 3))
            await h.provider.send(f)
            sent.append(f)
            if await h.provider.powerModes.last == .paused { break }
        }
        #expect(await h.provider.powerModes.last == .paused, "the detector still pauses the source")
        let stored = try await all(beekon)
        #expect(stored.last?.timestamp == sent.last?.timestamp, "the window was closed before the pause")
        #expect(maxDeviation(sent, stored) <= 25)
        try await beekon.stop()
    }

    @Test func badToleranceIsAClearConfigurationError() async throws {
        let beekon = Harness().beekon()
        for bad in [0, -1, .nan, .infinity] as [Double] {
            await #expect(throws: BeekonError.self) {
                try await beekon.configure(BeekonConfig(maxDeviationMeters: bad))
            }
        }
        await #expect(throws: BeekonError.self) {
            try await beekon.configure(BeekonConfig(maxDeviationMeters: 25, maxIntervalBetweenLocationsSeconds: 0))
        }
    }
}
