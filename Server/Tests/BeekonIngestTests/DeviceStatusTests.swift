import BeekonIngest
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// BY-8: staleness as data — last contact and last fix time kept apart, the interval the
    /// device declares, one status per device in /v1/devices and as `device` events.
    @Suite struct DeviceStatusHTTP {
        @Test(arguments: Backend.all)
        func statusFollowsFixTimeAndDeclaredIntervalNotArrival(_ backend: Backend) async throws {
            let db = try await backend.freshDatabase()
            defer { db.remove() }
            let clock = TestClock()
            var config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
            config.expectedIntervalSeconds = 60
            config.statusCheckSeconds = 0.05
            let server = try await TestServer.start(config, now: { clock.now() })
            do {
                try await Self.run(server, clock)
            } catch {
                try await server.stop()
                throw error
            }
            try await server.stop()
        }

        static func run(_ server: TestServer, _ clock: TestClock) async throws {
            let a = Fixtures.ids.next()
            let b = Fixtures.ids.next()
            let nowMs = WireTimestamp(clock.now()).millis
            var fresh = Fixtures.envelope(Fixtures.locations(2, startMillis: nowMs - 30_000, stepMillis: 10_000), install: a)
            fresh.device.syncIntervalSeconds = 300
            fresh.device.checkInIntervalSeconds = 120
            // B uploads, now, a backlog recorded three hours ago: contact is fresh, the position is not.
            let backlog = Fixtures.envelope(Fixtures.locations(5, startMillis: nowMs - 3 * 3_600_000), install: b)
            #expect(try await HTTP.upload(server, fresh).status == 200)
            #expect(try await HTTP.upload(server, backlog).status == 200)

            @Sendable func statuses(_ ms: [SSEMessage]) -> [String: String] {
                var out: [String: String] = [:]
                for m in ms where m.event == "device" {
                    let o = Live.object(m)
                    if let id = o["install_id"] as? String, let s = o["status"] as? String { out[id] = s }
                }
                return out
            }
            let first = try await Live.collect(server.base + "/v1/live", lastEventID: "0", kinds: ["device"]) { statuses($0).count == 2 }
            #expect(statuses(first) == [a.wireString: "live", b.wireString: "delayed"])
            let devices = try #require(try await HTTP.send("GET", server.base + "/v1/devices").json()["devices"] as? [[String: Any]])
            let byID = Dictionary(uniqueKeysWithValues: devices.map { ($0["install_id"] as? String ?? "", $0) })
            #expect(byID[a.wireString]?["status"] as? String == "live")
            #expect(byID[a.wireString]?["expected_interval_seconds"] as? Int == 300)
            #expect(byID[b.wireString]?["status"] as? String == "delayed")
            #expect(byID[b.wireString]?["expected_interval_seconds"] as? Int == 60)
            #expect(byID[b.wireString]?["last_contact_at"] != nil && byID[b.wireString]?["last_fix_at"] != nil)

            // Time passes without uploads: both fall silent, published once each.
            let resumeAt = first.last?.id
            clock.advance(by: .seconds(700))
            let later = try await Live.collect(server.base + "/v1/live", lastEventID: resumeAt, kinds: ["device"]) {
                statuses($0).count == 2
            }
            #expect(statuses(later) == [a.wireString: "silent", b.wireString: "silent"])
            #expect(later.filter { $0.event == "device" }.count == 2)
        }
    }

    /// Unit tests of the small value types behind the stream.
    @Suite struct LiveUnits {
        @Test func deviceStatusRule() {
            let now: Int64 = 10_000_000
            #expect(DeviceStatusProbe.of(fix: now - 100_000, contact: now, expected: 60, now: now) == "live")
            #expect(DeviceStatusProbe.of(fix: now - 121_000, contact: now, expected: 60, now: now) == "delayed")
            #expect(DeviceStatusProbe.of(fix: nil, contact: now - 1_000, expected: 60, now: now) == "delayed")
            #expect(DeviceStatusProbe.of(fix: now - 500_000, contact: now - 121_000, expected: 60, now: now) == "silent")
        }

        /// SSE framing: CRLF / CR / LF line ends, multi-line data, comments, retry, split feeds.
        @Test func sseParser() {
            var p = SSEParser()
            var got = p.feed(Array("retry: 1500\r\n: hi\r\nid: 7\r\nevent: fix\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n".utf8))
            #expect(got == [SSEMessage(event: "fix", data: "{\"a\":\n1}", id: "7")])
            #expect(p.retryMillis == 1500 && p.comments == 1)
            got = p.feed(Array("data: x\rdata".utf8))
            #expect(got.isEmpty)
            got = p.feed(Array(":y\r\r".utf8))
            #expect(got == [SSEMessage(data: "x\ny")])
            #expect(p.feed(Array("event: only\n\n".utf8)).isEmpty)
        }

        /// 1 s doubling to 30 s, half fixed and half jitter; a success resets it.
        @Test func backoff() {
            var b = LiveBackoff()
            #expect(b.nextDelay(unit: 0) == .milliseconds(500))
            #expect(b.nextDelay(unit: 1) == .seconds(2))
            for _ in 0..<10 { _ = b.nextDelay(unit: 0.5) }
            #expect(b.step == .seconds(30))
            #expect(b.nextDelay(unit: 1) == .seconds(30))
            b.reset()
            #expect(b.nextDelay(unit: 1) == .seconds(1))
        }
    }
}
