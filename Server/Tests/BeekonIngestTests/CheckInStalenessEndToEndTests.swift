import Beekon
import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 27's staleness acceptance (BY-4, BY-8, FX-6): the SDK at its default intervals
    /// (sync 300 s, check-in 900 s), stationary under `pauseWithCheckIns`, uploading to a real
    /// in-process `beekon-ingest` over loopback HTTP. The envelope declares
    /// `check_in_interval_seconds`, so the server expects the device every 900 s (2 × 900 s
    /// window) and a device that only checks in stays `live`, never `silent`. The SDK's and the
    /// server's clocks move together, by hand; real time only carries the requests.
    @Suite struct CheckInStalenessEndToEnd {
        /// Polls `GET /v1/devices` for this device's status and declared interval.
        static func status(_ server: TestServer, _ install: UUID) async throws -> (String?, Int?) {
            let devices = try await HTTP.send("GET", server.base + "/v1/devices").json()["devices"] as? [[String: Any]] ?? []
            let device = devices.first { $0["install_id"] as? String == install.wireString }
            return (device?["status"] as? String, device?["expected_interval_seconds"] as? Int)
        }

        @Test("BY-8: a stationary device that only checks in stays live, never silent")
        func aCheckingInDeviceNeverFallsSilent() async throws {
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let serverClock = TestClock()
            let config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
            let server = try await TestServer.start(config, now: { serverClock.now() })
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-e2e-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: dir) }
            do {
                let sdkClock = TestClock(start: serverClock.now())
                let provider = ScriptedProvider()
                let beekon = Beekon(
                    dependencies: BeekonDependencies(
                        databasePath: dir + "/beekon.sqlite", provider: provider, clock: sdkClock, transport: URLSessionTransport()))
                var settings = BeekonConfig(sync: SyncConfig(url: URL(string: server.base + "/v1/locations")!))
                settings.whenStationary = .pauseWithCheckIns  // every interval at its default
                try await beekon.configure(settings)
                try await beekon.start()
                let here = sdkClock.now()
                await provider.send(
                    (0...13).map {
                        RawFix(timestamp: here.addingTimeInterval(Double($0) * 10), latitude: 45.8, longitude: 15.97, accuracy: 5)
                    })
                sdkClock.advance(by: .seconds(130))
                serverClock.advance(by: .seconds(130))
                try await beekon.sync()
                let install = try await beekon.installID()
                let (first, expected) = try await Self.status(server, install)
                #expect(expected == 900, "the declared check-in interval, not the 300 s sync interval")
                #expect(first == "live")

                var positions = beekon.positions.makeAsyncIterator()
                for round in 1...6 {
                    // Just before the next check-in: 899 s without a fix or an upload.
                    serverClock.advance(by: .seconds(899))
                    let (waiting, _) = try await Self.status(server, install)
                    #expect(waiting == "live" || waiting == "delayed", "round \(round): \(waiting ?? "none")")
                    // The check-in falls due: recorded from the cached position and uploaded at once.
                    serverClock.advance(by: .seconds(1))
                    sdkClock.advance(by: .seconds(900))
                    while let location = await positions.next(), location.trigger != .checkIn {}
                    try await beekon.sync()
                    let (after, _) = try await Self.status(server, install)
                    #expect(after == "live", "round \(round)")
                }
                try await beekon.stop()
            } catch {
                try await server.stop()
                throw error
            }
            try await server.stop()
        }
    }
}
