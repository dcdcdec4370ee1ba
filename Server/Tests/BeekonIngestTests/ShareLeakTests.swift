import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 31, the share leak: every field a share token can read is narrowed by its
    /// `ShareScope` (BY-7 scoped shares; XR-2 roles per route; XR-4 nothing reveals more than the
    /// share's precision or window). The attack: a share limited to hours of the day, or to a
    /// history window, reads the sessions list and `/devices` and learns about fixes, contacts and
    /// status it may not see. Admin keys keep their full answers; device tokens are refused.
    @Suite struct ShareLeak {
        static let admin = ["X-API-Key": "admin-k"]

        static func ms(_ iso: String) -> Int64 { WireTimestamp(iso8601: iso)!.millis }
        static func at(_ iso: String) -> String { WireTimestamp(millis: ms(iso)).description }

        static func get(_ server: some TestTransport, _ path: String, _ headers: [String: String]) async throws -> HTTPResult {
            try await server.send("GET", path, headers: headers)
        }

        static func sessions(_ server: some TestTransport, _ install: UUID, _ headers: [String: String]) async throws -> [String: [String:
            Any]]
        {
            let r = try await get(server, "/v1/devices/\(install.wireString)/sessions", headers)
            #expect(r.status == 200, "\(r.text)")
            let list = try #require(try r.json()["sessions"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.map { ($0["session_id"] as? String ?? "", $0) })
        }

        static func device(_ server: some TestTransport, _ headers: [String: String]) async throws -> [String: Any] {
            let r = try await get(server, "/v1/devices", headers)
            #expect(r.status == 200, "\(r.text)")
            let list = try #require(try r.json()["devices"] as? [[String: Any]])
            #expect(list.count == 1)
            return try #require(list.first)
        }

        /// The fields that tell when a device was last in contact: never for a share limited in time.
        static let contactFields = ["last_received_at", "last_contact_at", "status", "fix_count"]

        @Test("BY-7, XR-2, XR-4: sessions and /devices show a share only what its hours and window admit", arguments: Backend.all)
        func sessionsAndDevicesAreNarrowedByTheScope(_ backend: Backend) async throws {
            // 2026-01-10T20:00Z: 21:00 in Berlin, outside 07:00-19:00; the upload arrives now.
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_075_200))
            try await Shares.withAdminServer(backend, clock) { server, db in
                let a = Fixtures.ids.next()
                let day = Fixtures.ids.next()
                let night = Fixtures.ids.next()
                // Berlin (UTC+1): 06:30 out, 07:30 in, 18:30 in, 19:30 out.
                let times = [
                    "2026-01-09T05:30:00.000Z", "2026-01-09T06:30:00.000Z", "2026-01-09T17:30:00.000Z", "2026-01-09T18:30:00.000Z",
                ]
                let fixes = times.map { Fixtures.locations(1, startMillis: Self.ms($0))[0] }
                let inside = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "home", type: .enter,
                    timestamp: WireTimestamp(millis: Self.ms("2026-01-09T06:45:00.000Z")))
                let outside = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "home", type: .exit,
                    timestamp: WireTimestamp(millis: Self.ms("2026-01-09T18:45:00.000Z")))
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(fixes, session: day, install: a, events: [inside, outside]), headers: Self.admin
                    )
                    .status == 200)
                // A session wholly outside the hours: 21:00 Berlin.
                let late = [Fixtures.locations(1, startMillis: Self.ms("2026-01-09T20:00:00.000Z"))[0]]
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(late, session: night, install: a), headers: Self.admin).status == 200)

                // Admin: today's answers, every fix and event, contact and status.
                let all = try await Self.sessions(server, a, Self.admin)
                #expect(all.count == 2)
                #expect(all[day.wireString]?["fix_count"] as? Int == 4)
                #expect(all[day.wireString]?["geofence_event_count"] as? Int == 2)
                #expect(all[day.wireString]?["first_fix_at"] as? String == Self.at(times[0]))
                #expect(all[day.wireString]?["last_fix_at"] as? String == Self.at(times[3]))
                #expect(all[night.wireString]?["fix_count"] as? Int == 1)
                let full = try await Self.device(server, Self.admin)
                for key in Self.contactFields { #expect(full[key] != nil, "admin lost \(key)") }
                #expect(full["last_received_at"] as? String == WireTimestamp(clock.now()).description)
                #expect((full["last_fix"] as? [String: Any])?["id"] as? String == late[0].id.wireString)

                // The hours share: the day session summarised from its two fixes and one event
                // inside the hours; the night session not listed at all.
                let hours = try await Shares.createShare(
                    server, #"{"devices":["\#(a.wireString)"],"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#)
                let byHours = ["Authorization": "Bearer \(hours.token)"]
                let seen = try await Self.sessions(server, a, byHours)
                #expect(Array(seen.keys) == [day.wireString])
                #expect(seen[day.wireString]?["fix_count"] as? Int == 2)
                #expect(seen[day.wireString]?["geofence_event_count"] as? Int == 1)
                #expect(seen[day.wireString]?["first_fix_at"] as? String == Self.at(times[1]))
                #expect(seen[day.wireString]?["last_fix_at"] as? String == Self.at(times[2]))
                // /devices: the newest fix it may see (18:30), no contact time, status or count (the
                // upload arrived at 21:00, outside the hours).
                let narrowed = try await Self.device(server, byHours)
                for key in Self.contactFields { #expect(narrowed[key] == nil, "hours share sees \(key): \(narrowed)") }
                #expect((narrowed["last_fix"] as? [String: Any])?["id"] as? String == fixes[2].id.wireString)
                #expect(narrowed["last_fix_at"] as? String == Self.at(times[2]))
                // Attack: the last fix's received_at (21:00) and its batch id (a UUIDv7) told of
                // the contact; a share limited in time reads the fix's own time and the nil UUID.
                let lastFix = try #require(narrowed["last_fix"] as? [String: Any])
                #expect(lastFix["received_at"] as? String == Self.at(times[2]), "\(lastFix)")
                #expect(lastFix["batch_id"] as? String == "00000000-0000-0000-0000-000000000000")
                let page = try await Self.get(server, "/v1/devices/\(a.wireString)/fixes", byHours).json()
                for f in page["fixes"] as? [[String: Any]] ?? [] {
                    #expect(
                        f["received_at"] as? String == f["timestamp"] as? String
                            && f["batch_id"] as? String == lastFix["batch_id"] as? String)
                }
                #expect(
                    (full["last_fix"] as? [String: Any])?["received_at"] as? String == WireTimestamp(clock.now()).description,
                    "admin keeps the receipt")

                // The history window (30 h: from 2026-01-09T14:00Z): the day session from 18:30 on
                // its two fixes after 14:00 and the 19:45 event; the night session's one fix.
                let window = try await Shares.createShare(server, #"{"devices":["\#(a.wireString)"],"history_seconds":108000}"#)
                let byWindow = ["Authorization": "Bearer \(window.token)"]
                let recent = try await Self.sessions(server, a, byWindow)
                #expect(recent.count == 2)
                #expect(recent[day.wireString]?["fix_count"] as? Int == 2)
                #expect(recent[day.wireString]?["geofence_event_count"] as? Int == 1)
                #expect(recent[day.wireString]?["first_fix_at"] as? String == Self.at(times[2]))
                #expect(recent[night.wireString]?["fix_count"] as? Int == 1)
                let windowed = try await Self.device(server, byWindow)
                for key in Self.contactFields { #expect(windowed[key] == nil, "window share sees \(key): \(windowed)") }
                #expect((windowed["last_fix"] as? [String: Any])?["id"] as? String == late[0].id.wireString)

                // After the window has passed every fix: nothing listed, no last fix.
                clock.advance(by: .seconds(3 * 86_400))
                #expect(try await Self.sessions(server, a, byWindow).isEmpty)
                let expired = try await Self.device(server, byWindow)
                #expect(expired["last_fix"] == nil && expired["last_received_at"] == nil && expired["status"] == nil)

                // Precision alone does not limit time: contact and counts stay; the position is coarsened.
                let coarse = try await Shares.createShare(server, #"{"devices":["\#(a.wireString)"],"precision_m":1000}"#)
                let blurred = try await Self.device(server, ["Authorization": "Bearer \(coarse.token)"])
                #expect(blurred["last_received_at"] != nil && blurred["fix_count"] as? Int == 5)
                let fix = try #require((blurred["last_fix"] as? [String: Any]))
                #expect(Shares.decimals(fix["latitude"]) <= 2 && fix["speed"] == nil && fix["bearing"] == nil)

                // A device token reads nothing.
                let device = try await AuthHTTP.seed(db, subject: "phone-1")
                let bearer = ["Authorization": "Bearer \(device.accessToken)"]
                #expect(try await Self.get(server, "/v1/devices", bearer).status == 403)
                #expect(try await Self.get(server, "/v1/devices/\(a.wireString)/sessions", bearer).status == 403)
            }
        }

        @Test("BY-7, XR-4: an hours share's pages never carry a cursor at a fix it may not see", arguments: Backend.all)
        func pagingCursorsPointOnlyAtVisibleFixes(_ backend: Backend) async throws {
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_075_200))
            try await Shares.withAdminServer(backend, clock) { server, _ in
                let a = Fixtures.ids.next()
                let session = Fixtures.ids.next()
                // Berlin: 06:00 out, 08:00 in, 20:00 out, 21:00 out, 09:00 next day in, 22:00 out.
                let times = [
                    "2026-01-08T05:00:00.000Z", "2026-01-08T07:00:00.000Z", "2026-01-08T19:00:00.000Z", "2026-01-08T20:00:00.000Z",
                    "2026-01-09T08:00:00.000Z", "2026-01-09T21:00:00.000Z",
                ]
                let fixes = times.map { Fixtures.locations(1, startMillis: Self.ms($0))[0] }
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(fixes, session: session, install: a), headers: Self.admin).status == 200
                )
                let share = try await Shares.createShare(
                    server, #"{"devices":["\#(a.wireString)"],"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#)
                let auth = ["Authorization": "Bearer \(share.token)"]
                let visible = Set([times[1], times[4]].map { String(Self.ms($0)) })

                for (path, key) in [
                    ("/v1/devices/\(a.wireString)/fixes?limit=1", "fixes"),
                    ("/v1/sessions/\(session.wireString)/track?limit=1", "features"),
                ] {
                    var seen: [String] = []
                    var url = path
                    for _ in 0..<10 {
                        let r = try await Self.get(server, url, auth)
                        #expect(r.status == 200, "\(path): \(r.text)")
                        let o = try r.json()
                        if key == "fixes" {
                            seen += (o["fixes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                        } else {
                            let feature = (o["features"] as? [[String: Any]])?.first
                            seen += (feature?["properties"] as? [String: Any])?["times"] as? [String] ?? []
                        }
                        guard let next = o["next_cursor"] as? String else { break }
                        // The cursor's time is a fix the share may see, never one outside its hours.
                        let millis = String(next.split(separator: "_").first ?? "")
                        #expect(visible.contains(millis), "\(path): cursor \(next) points at a fix outside the hours")
                        url = path + "&cursor=" + next
                    }
                    #expect(seen.count == 2, "\(path): \(seen)")
                    if key == "fixes" { #expect(seen == [fixes[1].id.wireString, fixes[4].id.wireString]) }
                }
                // Admin: every fix, one per page, as before.
                let first = try await Self.get(server, "/v1/devices/\(a.wireString)/fixes?limit=1", Self.admin).json()
                #expect((first["fixes"] as? [[String: Any]])?.first?["id"] as? String == fixes[0].id.wireString)
                #expect((first["next_cursor"] as? String)?.hasPrefix(String(Self.ms(times[0]))) == true)
            }
        }

        @Test(
            "BY-7, XR-2: a share's live ids are opaque: they do not count the events it does not see, nor probe the head",
            arguments: Backend.all)
        func liveIDsDoNotCountHiddenEvents(_ backend: Backend) async throws {
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_075_200))
            try await Shares.withAdminServer(backend, clock) { server, _ in
                let (a, b) = (Fixtures.ids.next(), Fixtures.ids.next())
                let share = try await Shares.createShare(server, #"{"devices":["\#(a.wireString)"],"live":true}"#)
                let auth = ["Authorization": "Bearer \(share.token)"]
                let now = WireTimestamp(clock.now()).millis
                let first = Fixtures.envelope(Fixtures.locations(1, startMillis: now - 60_000), install: a)
                #expect(try await HTTP.upload(server, first, headers: Self.admin).status == 200)
                // The attack: events the share does not see between two it does.
                let hidden = Fixtures.envelope(Fixtures.locations(7, startMillis: now - 50_000), install: b)
                #expect(try await HTTP.upload(server, hidden, headers: Self.admin).status == 200)
                let second = Fixtures.envelope(Fixtures.locations(1, startMillis: now - 40_000), install: a)
                #expect(try await HTTP.upload(server, second, headers: Self.admin).status == 200)
                let seen = try await Live.fixes(server.base + "/v1/live", headers: auth, after: "0", count: 2)
                #expect(seen.compactMap(Live.fixID) == [first.locations[0].id.wireString, second.locations[0].id.wireString])
                let ids = seen.compactMap(\.id)
                #expect(ids.count == 2 && ids.allSatisfy { $0.count == 17 && $0.hasPrefix("k") && Int64($0) == nil }, "\(ids)")
                // Admin ids stay the sequence: numbers, one per event.
                let admin = try await Live.fixes(server.base + "/v1/live", headers: Self.admin, after: "0", count: 9)
                #expect(admin.compactMap { $0.id.flatMap { Int64($0) } }.count == 9)
                // Its own id resumes its stream; a number other than 0 is refused (it would probe for the head).
                let resumed = try await Live.fixes(server.base + "/v1/live", headers: auth, after: ids[0], count: 1)
                #expect(resumed.compactMap(Live.fixID) == [second.locations[0].id.wireString])
                #expect(try await Self.get(server, "/v1/live?last_event_id=5", auth).status == 400)
            }
        }

        @Test("BY-5, BY-7: an hours share's proximity-events page says truncated only of events it may see", arguments: Backend.all)
        func proximityTruncationCountsOnlyAdmittedEvents(_ backend: Backend) async throws {
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_075_200))
            try await Shares.withAdminServer(backend, clock) { server, _ in
                let a = Fixtures.ids.next()
                // Berlin (UTC+1): two at night (01:00, 02:00), one by day (12:00).
                let times = ["2026-01-09T00:00:00.000Z", "2026-01-09T01:00:00.000Z", "2026-01-09T11:00:00.000Z"]
                var envelope = Fixtures.envelope(Fixtures.locations(1, startMillis: Self.ms(times[2])), install: a)
                envelope.proximityEvents = times.map {
                    Ingest.ProximityEvents.event(minor: 4, type: .enter, millis: Self.ms($0), distance: 2)
                }
                #expect(try await HTTP.upload(server, envelope, headers: Self.admin).status == 200)
                let share = try await Shares.createShare(
                    server, #"{"devices":["\#(a.wireString)"],"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#)
                let path = "/v1/devices/\(a.wireString)/proximity-events?limit=1"
                // The attack: `limit=1` over a night with events told `truncated` before the hours applied.
                let seen = try await Self.get(server, path, ["Authorization": "Bearer \(share.token)"]).json()
                let events = try #require(seen["proximity_events"] as? [[String: Any]])
                #expect(events.map { $0["id"] as? String } == [envelope.proximityEvents[2].id.wireString])
                #expect(seen["truncated"] == nil, "truncated told of events outside the hours: \(seen)")
                // Admin: the first event, and truncated.
                let all = try await Self.get(server, path, Self.admin).json()
                #expect((all["proximity_events"] as? [[String: Any]])?.first?["id"] as? String == envelope.proximityEvents[0].id.wireString)
                #expect(all["truncated"] as? Bool == true)
            }
        }

        @Test(
            "BY-2, BY-7: an hours share asks for a fresh fix only within its hours and sees an answer only from them",
            arguments: Backend.all)
        func locateFollowsTheHours(_ backend: Backend) async throws {
            // 2026-01-10T17:59Z: 18:59 in Berlin, inside 07:00-19:00.
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_067_940))
            try await withRouter(backend, configure: Locate.configure, now: { clock.now() }) { server, _ in
                let a = Fixtures.ids.next()
                let share = try await Shares.createShare(
                    server, #"{"devices":["\#(a.wireString)"],"locate":true,"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#)
                let auth = ["Authorization": "Bearer \(share.token)"]
                let created = try await Locate.post(server, a, auth)
                #expect(created.status == 202, "\(created.text)")
                let id = try #require(try created.json()["id"] as? String)
                // Answered 61 s later, at 19:00:01: outside the hours (the request expires after 120 s).
                clock.advance(by: .seconds(61))
                var fix = Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis)[0]
                fix.trigger = .manual
                fix.locateRequestId = UUID(uuidString: id)
                #expect(try await HTTP.upload(server, Fixtures.envelope([fix], install: a), headers: Self.admin).status == 200)
                let full = try await Locate.get(server, a, id)
                #expect(full["state"] as? String == "answered" && (full["fix"] as? [String: Any])?["id"] as? String == fix.id.wireString)
                let r = try await Self.get(server, "/v1/devices/\(a.wireString)/locate/\(id)", auth)
                #expect(r.status == 200, "\(r.text)")
                #expect(try r.json()["state"] as? String == "answered")
                #expect(try r.json()["fix"] is NSNull, "the share sees a fix from outside its hours: \(r.text)")
                // Attack: the step times and the fix's id (a UUIDv7: its time) told when the device answered.
                for key in ["finished_at", "fix_id", "late_fix_id"] {
                    let value = try r.json()[key]
                    #expect(value == nil || value is NSNull, "\(key) from outside the hours: \(r.text)")
                }
                #expect(!r.text.contains(fix.id.wireString))
                // Now (19:01) is outside the hours: no new request; the admin still may.
                clock.advance(by: .seconds(60))
                #expect(try await Locate.post(server, a, auth).status == 403)
                #expect(try await Locate.post(server, a).status == 202)
            }
        }

        @Test(
            "issue 50, BY-2, BY-7: an hours share sees nothing of a locate request made outside its hours; no share sees a share's id",
            arguments: Backend.all)
        func locateRequestsOutsideTheHoursAndOtherSharesAreHidden(_ backend: Backend) async throws {
            // 2026-01-10T05:59:30Z: 06:59:30 in Berlin, outside 07:00-19:00.
            let clock = TestClock(start: Date(timeIntervalSince1970: 1_768_024_770))
            try await withServer(backend, configure: Locate.configure, now: { clock.now() }) { server, _ in
                let a = Fixtures.ids.next()
                let devices = #""devices":["\#(a.wireString)"],"live":true"#
                let hours = try await Shares.createShare(
                    server, #"{\#(devices),"hours":"07:00-19:00","time_zone":"Europe/Berlin"}"#)
                let asker = try await Shares.createShare(server, #"{\#(devices),"locate":true}"#)
                let other = try await Shares.createShare(server, #"{\#(devices)}"#)
                let bearer = { (token: String) in ["Authorization": "Bearer \(token)"] }
                // Share B asks at 06:59:30; the device takes the request at 07:00:10, inside the hours.
                let created = try await Locate.post(server, a, bearer(asker.token))
                #expect(created.status == 202, "\(created.text)")
                let id = try #require(try created.json()["id"] as? String)
                clock.advance(by: .seconds(40))
                let commands = try await server.send(
                    "GET", "/v1/devices/\(a.wireString)/commands?wait=0", headers: Self.admin)
                #expect(commands.text.contains(id), "\(commands.text)")
                let path = "/v1/devices/\(a.wireString)/locate/\(id)"
                // The attack: the hours share read its state and step times.
                let hidden = try await Self.get(server, path, bearer(hours.token))
                #expect(hidden.status == 404, "the hours share reads a request made outside its hours: \(hidden.status) \(hidden.text)")
                // The attack: another share read B's id in requested_by. B reads its own, the admin every one.
                let r = try await Self.get(server, path, bearer(other.token))
                #expect(r.status == 200, "\(r.text)")
                #expect(try r.json()["requested_by"] as? String == "share", "\(r.text)")
                #expect(!r.text.contains(asker.id), "another share reads the asker's share id: \(r.text)")
                #expect(try await Self.get(server, path, bearer(asker.token)).json()["requested_by"] as? String == asker.id)
                #expect(try await Locate.get(server, a, id)["requested_by"] as? String == asker.id)
                // The streams: the other share's locate events carry no share id; the hours share
                // gets none of this request's events, only the fix after them.
                let fix = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis), install: a)
                #expect(try await HTTP.upload(server, fix, headers: Self.admin).status == 200)
                let kinds: Set<String> = ["fix", "locate"]
                let otherStream = try await Live.collect(
                    server.base + "/v1/live", headers: bearer(other.token), lastEventID: "0", kinds: kinds
                ) { $0.contains { $0.event == "fix" } }
                #expect(otherStream.filter { $0.event == "locate" }.count == 2, "\(otherStream)")
                #expect(!otherStream.contains { $0.data.contains(asker.id) }, "\(otherStream)")
                let hoursStream = try await Live.collect(
                    server.base + "/v1/live", headers: bearer(hours.token), lastEventID: "0", kinds: kinds
                ) { $0.contains { $0.event == "fix" } }
                #expect(!hoursStream.contains { $0.event == "locate" }, "\(hoursStream)")
            }
        }
    }
}
