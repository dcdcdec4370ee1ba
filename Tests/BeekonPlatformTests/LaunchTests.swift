@testable import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

/// Relaunch by the OS (significant-location change, region event, refresh): with a
/// persisted tracking intent the same session resumes with no call from the host app;
/// without one the SDK stays idle (LC-6, LC-7, BY-10).
@Suite("Auto-resume on first use")
struct LaunchTests {
    @Test func theLaunchPlan() {
        let s = UUID()
        #expect(LaunchPlan.decide(autoResume: true, alreadyDecided: false, tracking: nil, persistedIntent: s) == .resume(s))
        #expect(LaunchPlan.decide(autoResume: true, alreadyDecided: false, tracking: nil, persistedIntent: nil) == .idle)
        #expect(LaunchPlan.decide(autoResume: false, alreadyDecided: false, tracking: nil, persistedIntent: s) == .none)
        #expect(LaunchPlan.decide(autoResume: true, alreadyDecided: true, tracking: nil, persistedIntent: s) == .none)
        #expect(LaunchPlan.decide(autoResume: true, alreadyDecided: false, tracking: s, persistedIntent: s) == .none)
    }

    @Test func aRelaunchWithAPersistedIntentResumesTheSameSessionWhenTheAppOnlyObservesState() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let before = ScriptedProvider()
        let killed = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: before, clock: clock))
        try await killed.start()
        let session = try #require(await killed.sessionID)
        await feed(killed, before, [fix(0)], expecting: 1)
        // The process dies here (no stop, no shutdown). The OS relaunches the app:
        let after = ScriptedProvider()
        let relaunched = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: after, clock: clock, resumesOnFirstUse: true))
        for await state in relaunched.state where state == .tracking { break }  // the app only subscribes
        #expect(await relaunched.sessionID == session)
        #expect(await after.isRunning)
        // The gate continues from the last stored fix: the cached first fix is dropped, a later one stored.
        await after.send([fix(0), fix(60, north: 500)])
        var stored: [Location] = []
        for await location in relaunched.positions where location.timestamp > fix(0).timestamp {
            stored.append(location)
            break
        }
        #expect(stored.count == 1)
        let history = try await relaunched.history(from: .distantPast, to: .distantFuture)
        #expect(history.count == 2)
        try await relaunched.stop()
    }

    @Test func anyFirstCallAlsoResumes() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let killed = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        try await killed.start()
        let session = await killed.sessionID
        let relaunched = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: ScriptedProvider(), clock: clock, resumesOnFirstUse: true))
        _ = try await relaunched.pendingUploadCount()
        #expect(relaunched.currentState == .tracking)
        #expect(await relaunched.sessionID == session)
        #expect(try await relaunched.resumeIfNeeded() == false)  // already resumed: nothing to do
    }

    @Test func withoutAnIntentTheRelaunchStaysIdle() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let first = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        try await first.start()
        try await first.stop()  // the user stopped: the intent is cleared
        let provider = ScriptedProvider()
        let relaunched = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, resumesOnFirstUse: true))
        _ = try await relaunched.storeReport()
        #expect(relaunched.currentState == .idle)
        #expect(await provider.startCount == 0)
        #expect(await relaunched.sessionID == nil)
    }

    @Test func withoutAutoResumeTheHostDecides() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let killed = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        try await killed.start()
        let relaunched = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        _ = try await relaunched.storeReport()
        #expect(relaunched.currentState == .idle)  // the agent and tests call resumeIfNeeded() themselves
        #expect(try await relaunched.resumeIfNeeded())
    }

    #if os(Linux)
        @Test func onLinuxTheSharedInstanceSaysHowToSupplyAProvider() async {
            let deps = BeekonDependencies.platformDefault
            #expect(!deps.resumesOnFirstUse)
            do {
                _ = try await deps.provider.start(mode: .balanced)
                Issue.record("the Linux default provider must not start")
            } catch let error as LocationProviderError {
                #expect("\(error)".contains("Beekon(dependencies:)"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    #endif
}
