import BeekonTestSupport
import BeekonWire
import Beekon
import BeekonTesting
import Foundation
import Testing

@Suite("Persistence, resume and retention (LC-6, LC-7, ST)")
struct BeekonPersistenceTests {
    @Test func processDeathResumesTheSameSessionAndStopPreventsResume() async throws {
        let h = Harness()
        let first = h.beekon()
        try await first.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await first.start()
        let session = try #require(await first.sessionID)
        #expect(session.uuidV7Millis != nil, "session ids are UUIDv7")
        await h.provider.send([fix(1), fix(2, north: 10), fix(3, north: 20)])
        let installID = try await first.installID()
        // "Process death": a new instance on the same database, no stop().
        let second = h.beekon()
        #expect(try await second.resumeIfNeeded())
        #expect(await second.sessionID == session)
        #expect(second.currentState == .tracking)
        #expect(try await second.installID() == installID)
        #expect(try await second.configuration().minDistanceBetweenLocationsMeters == 0, "config persisted (LC-8)")
        // The replayed prefix is not stored twice; new fixes continue the session.
        await h.provider.send([fix(1), fix(2, north: 10), fix(3, north: 20), fix(4, north: 30)])
        let rows = try await second.history(from: .distantPast, to: .distantFuture)
        #expect(rows.count == 4 && Set(rows.map(\.sessionId)) == [session])
        try await second.stop()
        let third = h.beekon()
        #expect(try await third.resumeIfNeeded() == false)
        #expect(third.currentState == .idle)
    }

    @Test func shutdownKeepsTheIntent() async throws {
        let h = Harness()
        let first = h.beekon()
        try await first.start()
        let session = await first.sessionID
        await first.shutdown()
        #expect(first.currentState == .stopped(.system))
        let second = h.beekon()
        #expect(try await second.resumeIfNeeded())
        #expect(await second.sessionID == session)
    }

    @Test func newStartMakesANewSession() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()
        let a = await beekon.sessionID
        try await beekon.stop()
        try await beekon.start()
        let b = await beekon.sessionID
        #expect(a != nil && b != nil && a != b)
        #expect(try await beekon.storeReport().sessionCount == 2)
    }

    @Test func rowCapTrimsOldestAndCounts() async throws {
        let h = Harness()
        let beekon = h.beekon(rowCap: 5)
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send((0..<8).map { fix(Double($0), north: Double($0) * 10) })
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.count == 5)
        #expect(rows.first?.timestamp == fix(3).timestamp, "the three oldest were trimmed")
        #expect(try await beekon.storeReport().trimmedRowsTotal == 3)
        #expect(await beekon.statistics.trimmed == 3)
    }

    @Test func localOnlyAgePruneUsesTheInjectedClock() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send([fix(0), fix(60, north: 10)])
        // Eight days later (the clock drives "now"), a new fix triggers the hourly prune.
        h.clock.advance(by: .seconds(8 * 86_400))
        await h.provider.send(fix(8 * 86_400, north: 20))
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.count == 1)
        #expect(try await beekon.storeReport().agedRowsTotal == 2)
    }

    @Test func historyRangeAndDelete() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        await h.provider.send((0..<10).map { fix(Double($0) * 60, north: Double($0) * 10) })
        try await beekon.stop()
        let base = fix(0).timestamp
        let mid = try await beekon.history(from: base.addingTimeInterval(120), to: base.addingTimeInterval(300))
        #expect(mid.map(\.timestamp) == (2...5).map { base.addingTimeInterval(Double($0) * 60) })
        #expect(try await beekon.deleteLocations(before: base.addingTimeInterval(240)) == 4)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == 6)
        // ST-2: history after relaunch, while not tracking.
        #expect(try await h.beekon().history(from: .distantPast, to: .distantFuture).count == 6)
    }

    @Test func corruptDatabaseIsAStorageErrorNotACrash() async throws {
        let dir = TempDir()
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: dir.db))
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: TestClock()))
        do {
            try await beekon.start()
            Issue.record("expected a storage error")
        } catch {
            guard case .storage(let message) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(message.contains(dir.db))
        }
        #expect(beekon.currentState == .idle)
    }

    @Test func unwritableLocationIsAStorageError() async throws {
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: "/proc/beekon-cannot-exist/db.sqlite", provider: ScriptedProvider(), clock: TestClock()))
        await #expect(throws: BeekonError.self) { try await beekon.history(from: .distantPast, to: .distantFuture) }
    }
}
