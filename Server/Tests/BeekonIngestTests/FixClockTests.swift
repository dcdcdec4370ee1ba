import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 28, time sanity: a device clock far ahead of the server's receipt clock never pins
    /// the device's last position or keeps its status `live` (IN-6: latest by fix time; BY-8).
    @Suite struct FixClock {
        /// `9999-12-31T23:59:59.999Z`, the stamp of the attack.
        static let endOfTime: Int64 = 253_402_300_799_999

        @Test("IN-6, BY-8: a fix stamped beyond the tolerance is stored but never becomes last_fix or status", arguments: Backend.all)
        func futureFixNeverPinsTheDevice(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withRouter(
                backend,
                configure: {
                    $0.expectedIntervalSeconds = 60
                    $0.statusCheckSeconds = 0.05
                }, now: { clock.now() }
            ) { server, _ in
                let a = Fixtures.ids.next()
                let nowMs = WireTimestamp(clock.now()).millis
                let real = Fixtures.locations(1, startMillis: nowMs - 30_000)
                let attack = Fixtures.locations(1, startMillis: Self.endOfTime)
                let skewed = Fixtures.locations(1, startMillis: nowMs + BeekonIngest.FixClock.futureToleranceMillis + 60_000)
                let upload = try await HTTP.upload(server, Fixtures.envelope(real + attack + skewed, install: a))
                #expect(upload.status == 200)
                #expect(try upload.json()["locations_stored"] as? Int == 3, "stored: history keeps what the device sent")

                func device() async throws -> [String: Any] {
                    let list = try #require(try await server.send("GET", "/v1/devices").json()["devices"] as? [[String: Any]])
                    return try #require(list.first { $0["install_id"] as? String == a.wireString })
                }
                let first = try await device()
                #expect((first["last_fix"] as? [String: Any])?["id"] as? String == real[0].id.wireString)
                #expect(first["status"] as? String == "live")

                // Time passes without uploads: the device falls silent (a 9999 fix would keep it live for good).
                clock.advance(by: .seconds(700))
                #expect(try await device()["status"] as? String != "live")

                // A fix a little ahead of the server (within the tolerance) is still the latest.
                let nowLater = WireTimestamp(clock.now()).millis
                let ahead = Fixtures.locations(1, startMillis: nowLater + 120_000)
                #expect(try await HTTP.upload(server, Fixtures.envelope(ahead, install: a)).status == 200)
                let last = try await device()
                #expect((last["last_fix"] as? [String: Any])?["id"] as? String == ahead[0].id.wireString)
                #expect(last["status"] as? String == "live")
            }
        }
    }
}
