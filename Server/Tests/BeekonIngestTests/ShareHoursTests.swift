import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 31: a share limited to hours of the day (`hours` + `time_zone`), the scope added
    /// through `ShareScope` alone. Outside its hours a share is answered like an expired history
    /// window: 200 with empty results, live events not delivered.
    @Suite struct ShareHours {
        static let admin = ["X-API-Key": "admin-k"]

        static func ms(_ iso: String) -> Int64 { WireTimestamp(iso8601: iso)!.millis }

        /// Whether `scope` admits a fix taken at `iso` (no history window, so the clock does not matter).
        static func admits(_ scope: ShareScope, _ iso: String) -> Bool {
            scope.admits(millis: ms(iso), nowMillis: ms(iso))
        }

        static func berlin(_ hours: String) throws -> ShareScope {
            let scope = ShareScope(hours: hours, timeZone: "Europe/Berlin")
            try scope.validate()
            return scope
        }

        @Test("IN-6: hours are local time in the zone, end exclusive (Europe/Berlin in winter and summer)")
        func localTimeEndExclusive() throws {
            let day = try Self.berlin("07:00-19:00")
            // Winter: UTC+1.
            #expect(!Self.admits(day, "2026-01-09T05:59:59.999Z"))
            #expect(Self.admits(day, "2026-01-09T06:00:00.000Z"))
            #expect(Self.admits(day, "2026-01-09T17:59:59.999Z"))
            #expect(!Self.admits(day, "2026-01-09T18:00:00.000Z"))
            // Summer: UTC+2.
            #expect(!Self.admits(day, "2026-06-15T04:59:59.999Z"))
            #expect(Self.admits(day, "2026-06-15T05:00:00.000Z"))
            #expect(!Self.admits(day, "2026-06-15T17:00:00.000Z"))
            let evening = try Self.berlin("19:00-24:00")
            #expect(Self.admits(evening, "2026-01-09T22:59:59.999Z"))
            #expect(!Self.admits(evening, "2026-01-09T23:00:00.000Z"))
        }

        @Test("IN-6: an overnight range (22:00-06:00) covers both sides of midnight")
        func overnight() throws {
            let night = try Self.berlin("22:00-06:00")
            #expect(Self.admits(night, "2026-01-09T21:00:00.000Z"))  // 22:00
            #expect(Self.admits(night, "2026-01-09T23:30:00.000Z"))  // 00:30
            #expect(Self.admits(night, "2026-01-10T04:59:59.999Z"))  // 05:59:59
            #expect(!Self.admits(night, "2026-01-10T05:00:00.000Z"))  // 06:00
            #expect(!Self.admits(night, "2026-01-10T12:00:00.000Z"))
            #expect(!Self.admits(night, "2026-01-09T20:59:59.999Z"))  // 21:59:59
        }

        @Test("IN-6: DST days follow the zone: the skipped hour never matches, the repeated hour matches twice")
        func daylightSavingDays() throws {
            let two = try Self.berlin("02:00-03:00")
            // 2026-03-29: at 01:00 UTC the clocks go from 02:00 CET to 03:00 CEST.
            #expect(!Self.admits(two, "2026-03-29T00:59:59.999Z"))  // 01:59:59 CET
            #expect(!Self.admits(two, "2026-03-29T01:00:00.000Z"))  // 03:00 CEST
            // 2026-10-25: at 01:00 UTC the clocks go from 03:00 CEST back to 02:00 CET.
            #expect(!Self.admits(two, "2026-10-24T23:59:59.999Z"))  // 01:59:59 CEST
            #expect(Self.admits(two, "2026-10-25T00:00:00.000Z"))  // 02:00 CEST
            #expect(Self.admits(two, "2026-10-25T01:30:00.000Z"))  // 02:30 CET, the second time
            #expect(!Self.admits(two, "2026-10-25T02:00:00.000Z"))  // 03:00 CET
            let day = try Self.berlin("07:00-19:00")
            #expect(!Self.admits(day, "2026-03-29T04:59:59.999Z"))  // 06:59:59 CEST
            #expect(Self.admits(day, "2026-03-29T05:00:00.000Z"))  // 07:00 CEST
            #expect(Self.admits(day, "2026-03-28T06:00:00.000Z"))  // 07:00 CET
        }

        @Test("IN-6: bad hours or zones are refused with the key named")
        func validation() {
            let cases: [(String?, String?, String)] = [
                ("7-19", "Europe/Berlin", "hours:"), ("07:00-07:00", "Europe/Berlin", "hours:"),
                ("24:00-06:00", "Europe/Berlin", "hours:"), ("07:60-19:00", "Europe/Berlin", "hours:"),
                ("07:00-19:00-21:00", "Europe/Berlin", "hours:"), ("０7:00-19:00", "Europe/Berlin", "hours:"),
                ("07:00-19:00", "Mars/Olympus", "time_zone:"), ("07:00-19:00", "+01:00", "time_zone:"),
                ("07:00-19:00", "", "time_zone:"), ("07:00-19:00", nil, "time_zone:"), (nil, "Europe/Berlin", "hours:"),
            ]
            for (hours, zone, key) in cases {
                do {
                    try ShareScope(hours: hours, timeZone: zone).validate()
                    Issue.record("accepted hours \(hours ?? "nil") in \(zone ?? "nil")")
                } catch {
                    #expect(error.description.hasPrefix(key), "\(error.description)")
                }
            }
            // A stored scope whose hours no longer parse admits nothing (fails closed).
            #expect(!Self.admits(ShareScope(hours: "07:00-07:00", timeZone: "Europe/Berlin"), "2026-01-09T12:00:00.000Z"))
        }

        /// One fix at each time, for device `install`.
        static func fixes(_ times: [String]) -> [WireLocation] {
            times.map { Fixtures.locations(1, startMillis: ms($0))[0] }
        }

        @Test(arguments: Backend.all)
        func hoursShareSeesOnlyItsHoursOnEveryEndpointAndTheStream(_ backend: Backend) async throws {
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_046_400))  // 2026-01-10T12:00Z
            try await Shares.withAdminServer(backend, clock) { server, db in
                let a = Fixtures.ids.next()
                let session = Fixtures.ids.next()
                // Berlin (UTC+1) 06:30 out, 07:30 in, 18:30 in, 19:30 out.
                let first = Self.fixes([
                    "2026-01-09T05:30:00.000Z", "2026-01-09T06:30:00.000Z", "2026-01-09T17:30:00.000Z", "2026-01-09T18:30:00.000Z",
                ])
                let inside = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "home", type: .enter,
                    timestamp: WireTimestamp(millis: Self.ms("2026-01-09T06:45:00.000Z")))
                let outside = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "home", type: .exit,
                    timestamp: WireTimestamp(millis: Self.ms("2026-01-09T18:45:00.000Z")))
                let batch = Fixtures.envelope(first, session: session, install: a, events: [inside, outside])
                #expect(try await HTTP.upload(server, batch, headers: Self.admin).status == 200)

                // The admin creates it; the answer echoes the keys.
                let created = try await HTTP.send(
                    "POST", server.base + "/v1/shares",
                    body: Array(#"{"devices":["\#(a.wireString)"],"live":true,"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#.utf8),
                    headers: Self.admin)
                #expect(created.status == 201, "\(created.text)")
                let share = try #require(try created.json()["share"] as? [String: Any])
                #expect(share["hours"] as? String == "07:00-19:00" && share["time_zone"] as? String == "Europe/Berlin")
                let auth = ["Authorization": "Bearer \(try #require(try created.json()["token"] as? String))"]

                let ids = { (r: HTTPResult) throws -> [String] in
                    try #require(try r.json()["fixes"] as? [[String: Any]]).compactMap { $0["id"] as? String }
                }
                let fixes = try await HTTP.send("GET", server.base + "/v1/devices/\(a.wireString)/fixes", headers: auth)
                #expect(fixes.status == 200)
                #expect(try ids(fixes) == [first[1], first[2]].map(\.id.wireString))
                let all = try await HTTP.send("GET", server.base + "/v1/devices/\(a.wireString)/fixes", headers: Self.admin)
                #expect(try ids(all).count == 4)
                let track = try await HTTP.send("GET", server.base + "/v1/sessions/\(session.wireString)/track", headers: auth)
                let geometry = try #require((try track.json()["features"] as? [[String: Any]])?.first?["geometry"] as? [String: Any])
                #expect((geometry["coordinates"] as? [[Any]])?.count == 2)
                // The newest fix (19:30) is outside: last_fix is the newest one inside (18:30), as if
                // the later one did not exist (its absence would tell of it); no all-time count.
                let devices = try #require(
                    try await HTTP.send("GET", server.base + "/v1/devices", headers: auth).json()["devices"] as? [[String: Any]])
                #expect(devices.count == 1 && devices[0]["fix_count"] == nil)
                #expect((devices.first?["last_fix"] as? [String: Any])?["id"] as? String == first[2].id.wireString)

                // The stream: the backlog inside the hours, then a live batch of which only the fix inside arrives.
                let backlog = [first[1].id, inside.id, first[2].id].map(\.wireString)
                let later = Self.fixes(["2026-01-10T05:00:00.000Z", "2026-01-10T08:00:00.000Z"])  // 06:00 out, 09:00 in
                let (reached, signal) = AsyncStream.makeStream(of: Void.self)
                let uploader = Task {
                    for await _ in reached {
                        _ = try await HTTP.upload(server, Fixtures.envelope(later, session: session, install: a), headers: Self.admin)
                        break
                    }
                }
                let marker = later[1].id.wireString
                let streamed = try await Live.collect(server.base + "/v1/live", headers: auth, lastEventID: "0") { ms in
                    if ms.count == backlog.count { signal.yield() }
                    return ms.contains { Live.fixID($0) == marker }
                }
                signal.finish()
                try await uploader.value
                #expect(streamed.map(Live.fixID) == backlog + [marker])

                // Now the newest fix (09:00) is inside: it is the share's last_fix.
                let now = try #require(
                    try await HTTP.send("GET", server.base + "/v1/devices", headers: auth).json()["devices"] as? [[String: Any]])
                #expect((now.first?["last_fix"] as? [String: Any])?["id"] as? String == marker)

                // A share whose hours hold no fix: answered 200 with nothing, not 401/403.
                let dark = try await Shares.createShare(
                    server, #"{"devices":["\#(a.wireString)"],"hours":"20:00-21:00","time_zone":"Europe/Berlin"}"#)
                let darkAuth = ["Authorization": "Bearer \(dark.token)"]
                let none = try await HTTP.send("GET", server.base + "/v1/devices/\(a.wireString)/fixes", headers: darkAuth)
                #expect(none.status == 200)
                #expect(try ids(none).isEmpty)
                let darkDevices = try await HTTP.send("GET", server.base + "/v1/devices", headers: darkAuth)
                #expect(darkDevices.status == 200)
                #expect((try darkDevices.json()["devices"] as? [[String: Any]])?.first?["last_fix"] == nil)

                // Bad input: 400 naming the key. A device token cannot create shares.
                let bad: [(String, String)] = [
                    (#"{"all":true,"hours":"7-19","time_zone":"Europe/Berlin"}"#, "hours"),
                    (#"{"all":true,"hours":"07:00-19:00","time_zone":"Mars/Olympus"}"#, "time_zone"),
                    (#"{"all":true,"hours":"07:00-19:00"}"#, "time_zone"),
                    (#"{"all":true,"hours":7,"time_zone":"Europe/Berlin"}"#, "hours"),
                ]
                for (body, key) in bad {
                    let r = try await HTTP.send("POST", server.base + "/v1/shares", body: Array(body.utf8), headers: Self.admin)
                    #expect(r.status == 400, "\(body): \(r.text)")
                    #expect((try r.json()["message"] as? String)?.hasPrefix("\(key):") == true, "\(body): \(r.text)")
                }
                let device = try await AuthHTTP.seed(db, subject: "phone-1")
                let refused = try await HTTP.send(
                    "POST", server.base + "/v1/shares",
                    body: Array(#"{"all":true,"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#.utf8),
                    headers: ["Authorization": "Bearer \(device.accessToken)"])
                #expect(refused.status == 403)
            }
        }
    }
}
