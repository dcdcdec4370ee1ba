import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// The seed rules on every path: a stop for services off clears the
/// tracking intent like any stop but the system's (LC-5: no resume when a condition
/// recovers), and a session that stops with fixes pending uploads them at once, whatever
/// stopped it (SY-3).
@Suite("Seed rules on every stop path")
struct SeedRuleTests {
    enum Stop: String, CaseIterable, Sendable {
        case user, permissionDenied, servicesDisabled
    }

    private func stop(_ beekon: Beekon, _ provider: ScriptedProvider, by cause: Stop) async throws {
        switch cause {
        case .user:
            try await beekon.stop()
        case .permissionDenied, .servicesDisabled:
            async let ended: Void = beekon.waitUntilSourceEnds()
            await provider.fail(
                cause == .permissionDenied ? LocationProviderError.permissionDenied : .servicesDisabled("Location Services off"))
            await ended
        }
    }

    @Test("LC-5: every stop but system clears the intent; the next launch does not resume", arguments: Stop.allCases)
    func aStopClearsTheIntent(cause: Stop) async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()
        #expect(try await beekon.storeReport().trackingIntent != nil)
        try await stop(beekon, h.provider, by: cause)
        #expect(try await beekon.storeReport().trackingIntent == nil, "stopped by \(cause): no auto-resume")
        let relaunched = Beekon(
            dependencies: BeekonDependencies(
                databasePath: h.dir.db, provider: ScriptedProvider(), clock: h.clock, resumesOnFirstUse: true))
        #expect(try await relaunched.resumeIfNeeded() == false)
    }

    @Test("LC-6: a system stop keeps the intent")
    func aSystemStopKeepsTheIntent() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()
        let session = await beekon.sessionID
        await beekon.shutdown()
        #expect(try await beekon.storeReport().trackingIntent == session)
    }

    @Test("SY-3: a session that stops with fixes pending uploads them at once, whatever stopped it", arguments: Stop.allCases)
    func everyStopFlushesTheTripTail(cause: Stop) async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        // An hour between interval uploads and no threshold: only the stop can trigger this upload.
        try await configureSync(beekon, syncConfig(SyncConfig(url: loopbackURL, intervalSeconds: 3_600)))
        try await beekon.start()
        await h.provider.send([fix(0), fix(10, north: 50)])
        let before = await transport.requests.count
        try await stop(beekon, h.provider, by: cause)
        await transport.waitForRequests(before + 1)
        let envelope = await transport.requests[before].envelope
        #expect(envelope.locations.count == 2, "stopped by \(cause): the tail went up at once")
    }
}
