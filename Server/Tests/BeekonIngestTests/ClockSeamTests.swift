@testable import BeekonIngest
import BeekonPrimitives
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 31: the server's time-driven parts run on the injected clock and id source, so a
    /// test freezes them instead of racing the real clock on a loaded machine.
    @Suite struct ClockSeams {
        /// A migrated SQLite store in a fresh file.
        static func scratchStore() async throws -> (SQLiteLocationStore, String) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "beekon-clock-\(Fixtures.ids.next().wireString).sqlite"
            ).path
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            try await store.migrate()
            return (store, path)
        }

        static func remove(_ path: String) {
            for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) }
        }

        /// BY-8: the device-status monitor waits on the injected sleep, for as long as the injected
        /// clock says: with an hour-long interval nothing but advancing the test clock can wake it.
        @Test(.timeLimit(.minutes(2)))
        func deviceStatusMonitorSleepsOnTheInjectedClock() async throws {
            let (store, path) = try await Self.scratchStore()
            defer { Self.remove(path) }
            let clock = TestClock()
            let asked = Locked<[Duration]>([])
            let monitor = DeviceStatusMonitor(
                store: store, defaultExpectedSeconds: 60, interval: .seconds(3600), now: { clock.now() }, logger: testLogger,
                onPublished: {},
                sleep: { d in
                    asked.withLock { $0.append(d) }
                    try await clock.sleep(for: d)
                })
            let run = Task { try await monitor.run() }
            await clock.waitForSleepers(1)
            #expect(asked.value == [.seconds(3600)], "no device: the whole interval")
            clock.advance(by: .seconds(3600))
            await clock.waitForSleepers(1)
            #expect(asked.value.count == 2, "the test clock, not real time, woke the loop")
            run.cancel()
            _ = try? await run.value
        }

        /// XR-2: a new refresh-token chain is named by the injected id source.
        @Test func refreshFamilyComesFromTheInjectedIDSource() async throws {
            let family = UUID(uuidString: "01890000-0000-7000-8000-000000000042")!
            let (store, path) = try await Self.scratchStore()
            defer { Self.remove(path) }
            let tokens = RecordingTokenStore(store.tokens)
            let clock = TestClock()
            let service = TokenService(
                store: tokens, accessTTLSeconds: 60, refreshTTLSeconds: 3600, now: { clock.now() }, makeFamilyID: { family })
            try await service.loadKey()
            _ = try await service.issue(subject: "phone-1")
            #expect(tokens.inserted.map(\.family) == [family.wireString])
            #expect(tokens.inserted.map(\.issuedMillis) == [WireTimestamp(clock.now()).millis])
        }

        /// BY-2: the command long-poll's wait runs on the injected clock. Held (its hub subscription
        /// counted in `beekon_live_viewers`) while that clock stands still, it answers the empty
        /// list once the clock passes the wait; without the advance it would hang to the client's
        /// read timeout and fail.
        @Test func commandPollWaitRunsOnTheInjectedClock() async throws {
            let clock = TestClock()
            try await withServer(.sqlite, now: { clock.now() }) { server, _ in
                let install = Fixtures.ids.next()
                let poll = Task {
                    try await HTTP.send("GET", server.base + "/v1/devices/\(install.wireString)/commands?wait=30")
                }
                try await ConnectionHardeningTests.waitForMetric(server, "beekon_live_viewers", within: .seconds(90)) { $0 == 1 }
                clock.advance(by: .seconds(30))
                let answer = try await poll.value
                #expect(answer.status == 200)
                #expect((try answer.json()["locate_requests"] as? [Any])?.isEmpty == true, "\(answer.text)")
            }
        }
    }
}

/// A token store that records the refresh tokens issued, in front of a real one.
final class RecordingTokenStore: TokenStore {
    let base: any TokenStore
    private let records = Locked<[RefreshTokenRecord]>([])
    init(_ base: any TokenStore) { self.base = base }
    var inserted: [RefreshTokenRecord] { records.value }

    func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8] { try await base.signingKey(proposed: proposed) }
    func insertRefreshToken(_ record: RefreshTokenRecord) async throws(StoreError) {
        records.withLock { $0.append(record) }
        try await base.insertRefreshToken(record)
    }
    func rotateRefreshToken(presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64, replayWindowMillis: Int64)
        async throws(StoreError) -> RefreshRotation
    {
        try await base.rotateRefreshToken(
            presentedHash: presentedHash, replacement: replacement, nowMillis: nowMillis, replayWindowMillis: replayWindowMillis)
    }
    func deviceBinding(subject: String, claim: UUID, nowMillis: Int64) async throws(StoreError) -> DeviceBinding {
        try await base.deviceBinding(subject: subject, claim: claim, nowMillis: nowMillis)
    }
    func revokeDevice(installId: UUID, nowMillis: Int64) async throws(StoreError) -> Int {
        try await base.revokeDevice(installId: installId, nowMillis: nowMillis)
    }
    func insertEnrollmentCode(_ code: EnrollmentCodeRecord) async throws(StoreError) { try await base.insertEnrollmentCode(code) }
    func enrollmentCodes(limit: Int) async throws(StoreError) -> [EnrollmentCodeListing] { try await base.enrollmentCodes(limit: limit) }
    func revokeEnrollmentCode(id: String, nowMillis: Int64) async throws(StoreError) -> Bool {
        try await base.revokeEnrollmentCode(id: id, nowMillis: nowMillis)
    }
    func redeemEnrollmentCode(hash: String, installId: UUID, refresh: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    { try await base.redeemEnrollmentCode(hash: hash, installId: installId, refresh: refresh, nowMillis: nowMillis) }
}
