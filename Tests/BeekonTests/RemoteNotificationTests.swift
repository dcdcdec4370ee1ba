import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// Locate on demand by silent push (BY-2): the host forwards the payload,
/// the SDK answers the locate request and reports what to pass to the system's completion
/// handler, within the background time the system gives.
@Suite("Remote notifications answer locate requests")
struct RemoteNotificationTests {
    /// A source whose one-shot fix takes an hour of the test clock.
    actor SlowProvider: LocationProvider {
        let clock: TestClock
        init(clock: TestClock) { self.clock = clock }
        func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> { AsyncThrowingStream { _ in } }
        func setPowerMode(_ mode: PowerMode) async {}
        func stop() async {}
        func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
            try await clock.sleep(for: .seconds(3_600))
            return fix(3_600)
        }
    }

    private func apns(_ id: UUID) -> [AnyHashable: Any] {
        ["aps": ["content-available": 1], "beekon": ["type": "locate", "locate_request_id": id.wireString]]
    }

    @Test("BY-2: a locate push is answered with one fresh fix: newData")
    func aLocatePushIsAnswered() async throws {
        let h = Harness()
        let beekon = h.beekon()
        await h.provider.setOneShotFix(fix(0))
        let id = UUID()
        let result = await beekon.handleRemoteNotification(WireLocatePush(userInfo: apns(id)))
        #expect(result == .newData)
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.map(\.locateRequestId) == [id])
        #expect(rows.first?.trigger == .manual)
        #expect(await beekon.handleRemoteNotification(WireLocatePush(userInfo: apns(id))) == .noData, "the same request twice")
    }

    @Test("BY-2: guards and failures map to noData and failed; other payloads are not ours")
    func resultsForTheCompletionHandler() async throws {
        let h = Harness()
        let beekon = h.beekon()
        #expect(await beekon.handleRemoteNotification(nil) == .notBeekon)
        #expect(await beekon.handleRemoteNotification(WireLocatePush(userInfo: ["aps": ["alert": "hi"]])) == .notBeekon)
        await beekon.setLocatePolicy(LocatePolicy(timeoutSeconds: 1))
        #expect(await beekon.handleRemoteNotification(WireLocatePush(locateRequestID: UUID())) == .failed, "no fix: failed")
        await beekon.setLocatePolicy(LocatePolicy(sharingEnabled: false))
        #expect(await beekon.handleRemoteNotification(WireLocatePush(locateRequestID: UUID())) == .noData, "sharing off")
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).isEmpty)
    }

    @Test("BY-2: past the background budget the result is failed, on the SDK's clock")
    func theBudgetBoundsTheAnswer() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let beekon = Beekon(
            dependencies: BeekonDependencies(databasePath: dir.db, provider: SlowProvider(clock: clock), clock: clock))
        _ = try await beekon.storeReport()
        async let result = beekon.handleRemoteNotification(WireLocatePush(locateRequestID: UUID()))
        await clock.waitForSleepers(2)  // the budget and the slow fix
        clock.advance(by: Beekon.remoteNotificationBudget)
        #expect(await result == .failed)
        #expect(Beekon.remoteNotificationBudget == .seconds(25), "under Apple's 30 s for a background notification")
        clock.advance(by: .seconds(3_600))
    }
}
