import BeekonIngest
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 52, items 2 and 3: people and circles, each member's sharing, the circle's live
    /// map and its wake-up, per route per role and as the attacker would try.
    @Suite struct Circles {
        typealias Identity = DeviceIdentity

        /// The test's clock: an hour after the fixtures' base time (2026-06-15 12:13 UTC).
        static func clock() -> TestClock { TestClock(start: Date(timeIntervalSince1970: Double(Fixtures.base) / 1000 + 3600)) }

        /// One person with one enrolled install: its id and its access token as headers.
        struct Member: Sendable {
            let person: String
            let install: UUID
            let headers: [String: String]
        }

        /// Enrols a fresh install with a code for `person` (what the app's backend would mint).
        static func member(_ server: some TestTransport, _ person: String) async throws -> Member {
            let code = try await Identity.newCode(server, #"{"person":"\#(person)"}"#)
            let install = Fixtures.ids.next()
            let r = try await Identity.enroll(server, code: code, install: install)
            #expect(r.status == 200, "\(r.text)")
            return Member(person: person, install: install, headers: Identity.bearer(try #require(try r.json()["access_token"] as? String)))
        }

        static func send(
            _ server: some TestTransport, _ method: String, _ path: String, _ body: String? = nil, _ headers: [String: String]
        ) async throws -> HTTPResult {
            try await server.send(
                method, path, body: body.map { Array($0.utf8) },
                headers: body == nil ? headers : headers.merging(["Content-Type": "application/json"]) { $1 })
        }

        /// Creates a circle owned by `owner`; its id.
        static func circle(_ server: some TestTransport, _ owner: Member, name: String = "family") async throws -> String {
            let r = try await send(server, "POST", "/v1/circles", #"{"name":"\#(name)"}"#, owner.headers)
            #expect(r.status == 201, "\(r.text)")
            return try #require(try r.json()["id"] as? String)
        }

        /// An invitation code of `circle`, made by `by`.
        static func invite(_ server: some TestTransport, _ circle: String, _ by: [String: String], _ body: String? = nil) async throws
            -> String
        {
            let r = try await send(server, "POST", "/v1/circles/\(circle)/invitations", body, by)
            #expect(r.status == 201, "\(r.text)")
            #expect(r.headers["cache-control"] == "no-store")
            return try #require(try r.json()["code"] as? String)
        }

        static func join(_ server: some TestTransport, _ code: String, _ who: Member) async throws -> HTTPResult {
            try await send(server, "POST", "/v1/circles/join", #"{"code":"\#(code)"}"#, who.headers)
        }

        /// A circle owned by `owner` with `others` joined.
        static func circle(_ server: some TestTransport, _ owner: Member, with others: [Member]) async throws -> String {
            let id = try await circle(server, owner)
            for m in others {
                let r = try await join(server, try await invite(server, id, owner.headers), m)
                #expect(r.status == 200, "\(r.text)")
                #expect(try r.json()["joined"] as? Bool == true)
            }
            return id
        }

        /// Uploads one fix of `install` at `millis` (admin key), at a position with many digits.
        static func fix(
            _ server: some TestTransport, _ install: UUID, at millis: Int64, lat: Double = 52.520_008_1, lon: Double = 13.404_954_3
        )
            async throws -> String
        {
            var l = Fixtures.locations(1, startMillis: millis)[0]
            l.latitude = lat
            l.longitude = lon
            #expect(try await HTTP.upload(server, Fixtures.envelope([l], install: install), headers: Identity.admin).status == 200)
            return l.id.wireString
        }

        /// The member `person` of a circle's JSON.
        static func member(_ circle: [String: Any], _ person: String) throws -> [String: Any] {
            try #require((circle["members"] as? [[String: Any]])?.first { $0["person"] as? String == person }, "\(person) in \(circle)")
        }

        /// The stream's messages until `done` holds, or the stream ends (`ended` true); every kind.
        /// `opened` is called once, when the first message (the `circle` event) arrived.
        static func stream(
            _ url: String, headers: [String: String], lastEventID: String? = nil, timeout: Duration = .seconds(60),
            opened: @escaping @Sendable () -> Void = {}, until done: @escaping @Sendable ([SSEMessage]) -> Bool
        ) async throws -> (messages: [SSEMessage], ended: Bool) {
            let viewer = LiveViewer(url: URL(string: url)!, headers: headers, lastEventID: lastEventID)
            return try await withThrowingTaskGroup(of: ([SSEMessage], Bool)?.self) { group in
                group.addTask {
                    var got: [SSEMessage] = []
                    for await event in viewer.events() {
                        switch event {
                        case .message(let m):
                            got.append(m)
                            if got.count == 1 { opened() }
                            if done(got) { return (got, false) }
                        case .disconnected, .refused: return (got, true)
                        default: continue
                        }
                    }
                    return (got, true)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)  // bounds a failure only
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let got = first else {
                    throw TestFailure("the circle's stream did not get there within \(timeout)")
                }
                return got
            }
        }

        /// A stream opened in the background: `wait()` returns once its first message arrived.
        struct Opening: Sendable {
            let signal: AsyncStream<Void>
            let yield: @Sendable () -> Void

            init() {
                let (s, c) = AsyncStream.makeStream(of: Void.self)
                signal = s
                yield = { c.yield() }
            }

            func wait() async {
                var it = signal.makeAsyncIterator()
                _ = await it.next()
            }
        }

        // MARK: Roles

        @Test(
            "issue 52: every circle route per role — admin, owner, member, non-member, no person, enroller, share, anonymous",
            arguments: Backend.all)
        func roleTable(_ backend: Backend) async throws {
            let clock = Self.clock()
            try await withServer(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let carol = try await Self.member(server, "carol")
                // A device credential bound to no person (a code without one), an enroller key, a share token, nobody.
                let nobodyInstall = Fixtures.ids.next()
                let plain = try await Identity.enroll(server, code: try await Identity.newCode(server), install: nobodyInstall)
                let nobody = Identity.bearer(try #require(try plain.json()["access_token"] as? String))
                let made = try await Self.send(server, "POST", "/v1/shares", #"{"all":true,"live":true,"locate":true}"#, Identity.admin)
                let share = Identity.bearer(try #require(try made.json()["token"] as? String))
                let id = try await Self.circle(server, alice, with: [bob])
                let spare = try await Self.invite(server, id, alice.headers)
                struct Row {
                    var method: String, path: String, body: String? = nil
                    var admin: Int, owner: Int, member: Int, outsider: Int
                    var nobody = 403, enroller = 403, share = 401, anonymous = 401
                }
                let c = "/v1/circles/\(id)"
                let rows: [Row] = [
                    Row(method: "GET", path: "/v1/me", admin: 403, owner: 200, member: 200, outsider: 200),
                    Row(
                        method: "PUT", path: "/v1/me", body: #"{"display_name":"Bee"}"#, admin: 403, owner: 204, member: 204, outsider: 204),
                    Row(method: "GET", path: "/v1/circles", admin: 200, owner: 200, member: 200, outsider: 200),
                    Row(method: "POST", path: "/v1/circles", body: #"{"name":"x"}"#, admin: 400, owner: 201, member: 201, outsider: 201),
                    Row(
                        method: "POST", path: "/v1/circles", body: #"{"name":"x","owner":"dave"}"#, admin: 201, owner: 400, member: 400,
                        outsider: 400),
                    Row(method: "GET", path: c, admin: 200, owner: 200, member: 200, outsider: 404),
                    Row(method: "POST", path: c + "/invitations", admin: 201, owner: 201, member: 403, outsider: 404),
                    Row(method: "POST", path: c + "/wake", admin: 202, owner: 202, member: 202, outsider: 404),
                    Row(
                        method: "PUT", path: c + "/members/bob/sharing", body: #"{"precision_m":100}"#, admin: 200, owner: 403, member: 200,
                        outsider: 404),
                    Row(method: "DELETE", path: c + "/members/alice", admin: 204, owner: 204, member: 403, outsider: 404),
                    Row(
                        method: "POST", path: "/v1/circles/join", body: #"{"code":"bci1.nope"}"#, admin: 403, owner: 400, member: 400,
                        outsider: 400),
                    Row(method: "DELETE", path: c, admin: 200, owner: 200, member: 403, outsider: 404),
                ]
                let roles: [(String, [String: String], KeyPath<Row, Int>)] = [
                    ("nobody", nobody, \Row.nobody), ("enroller", Identity.enroller, \Row.enroller), ("share", share, \Row.share),
                    ("anonymous", [:], \Row.anonymous), ("outsider", carol.headers, \Row.outsider), ("member", bob.headers, \Row.member),
                    ("owner", alice.headers, \Row.owner), ("admin", Identity.admin, \Row.admin),
                ]
                for (role, headers, pick) in roles {
                    for row in rows {
                        // Destructive rows are probed with their refusals here and done for real below.
                        let expected = row[keyPath: pick]
                        if row.method == "DELETE", expected < 300 { continue }
                        let r = try await Self.send(server, row.method, row.path, row.body, headers)
                        #expect(r.status == expected, "\(role) \(row.method) \(row.path): \(r.text)")
                    }
                    // The live stream: refusals answer at once; a member's and an admin's open with the circle.
                    let expectedLive = ["nobody": 403, "enroller": 403, "share": 401, "anonymous": 401, "outsider": 404][role]
                    if let expectedLive {
                        #expect(try await Self.send(server, "GET", c + "/live", nil, headers).status == expectedLive, "\(role) live")
                    } else {
                        let (messages, _) = try await Self.stream(server.base + c + "/live", headers: headers) { !$0.isEmpty }
                        #expect(messages.first?.event == "circle", "\(role) live")
                    }
                }
                // What the roles above were refused, done by those allowed: the owner removes a
                // member, a member leaves, an outsider joins with a code, the owner deletes.
                #expect(try await Self.join(server, spare, carol).status == 200)
                #expect(try await Self.send(server, "DELETE", c + "/members/carol", nil, alice.headers).status == 204)
                #expect(try await Self.send(server, "DELETE", c + "/members/bob", nil, bob.headers).status == 204)
                #expect(try await Self.send(server, "DELETE", c, nil, alice.headers).status == 200)
                #expect(try await Self.send(server, "GET", c, nil, Identity.admin).status == 404)
            }
        }

        // MARK: Attacks

        @Test("issue 52: a removed member's open stream ends at once, and they can read and wake nothing after", arguments: Backend.all)
        func removedMembersStreamEnds(_ backend: Backend) async throws {
            let clock = Self.clock()
            try await withServer(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let id = try await Self.circle(server, alice, with: [bob])
                let url = server.base + "/v1/circles/\(id)/live"
                let opening = Opening()
                async let bobsStream = Self.stream(url, headers: bob.headers, opened: opening.yield) { _ in false }
                await opening.wait()
                #expect(try await Self.send(server, "DELETE", "/v1/circles/\(id)/members/bob", nil, alice.headers).status == 204)
                let (messages, ended) = try await bobsStream
                #expect(ended, "the removed member's stream ended")
                #expect(messages.first?.event == "circle")
                #expect(try await Self.send(server, "GET", "/v1/circles/\(id)/live", nil, bob.headers).status == 404)
                #expect(try await Self.send(server, "GET", "/v1/circles/\(id)", nil, bob.headers).status == 404)
                #expect(try await Self.send(server, "POST", "/v1/circles/\(id)/wake", nil, bob.headers).status == 404)
            }
        }

        @Test("issue 52: a person holds at most --max-streams-per-share circle streams; closing one frees it")
        func streamsPerPersonAreCapped() async throws {
            let clock = Self.clock()
            let configure: (inout IngestConfiguration) -> Void = {
                Identity.required(&$0)
                $0.maxStreamsPerShare = 1
            }
            try await withServer(.sqlite, configure: configure, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let id = try await Self.circle(server, alice, with: [bob])
                let url = server.base + "/v1/circles/\(id)/live"
                let opening = Opening()
                async let held = Self.stream(url, headers: bob.headers, opened: opening.yield) { _ in false }
                await opening.wait()
                let second = try await Self.send(server, "GET", "/v1/circles/\(id)/live", nil, bob.headers)
                #expect(second.status == 429, "\(second.text)")
                #expect(try second.json()["error"] as? String == "too_many_open")
                // Another person is not held by Bob's streams.
                let (alices, _) = try await Self.stream(url, headers: alice.headers) { !$0.isEmpty }
                #expect(alices.first?.event == "circle")
                // Bob leaves: his stream ends, and so does its hold.
                #expect(try await Self.send(server, "DELETE", "/v1/circles/\(id)/members/bob", nil, bob.headers).status == 204)
                let (_, ended) = try await held
                #expect(ended)
            }
        }

        @Test("issue 52: a member allowing 1000 m is seen at 1000 m — view and stream — and whole only by themself", arguments: Backend.all)
        func precisionIsEachMembersOwn(_ backend: Backend) async throws {
            let clock = Self.clock()
            try await withServer(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let id = try await Self.circle(server, alice, with: [bob])
                let set = try await Self.send(
                    server, "PUT", "/v1/circles/\(id)/members/bob/sharing", #"{"precision_m":1000}"#, bob.headers)
                #expect(set.status == 200, "\(set.text)")
                let nowMs = WireTimestamp(clock.now()).millis
                let url = server.base + "/v1/circles/\(id)/live"
                let opening = Opening()
                async let alicesStream = Self.stream(url, headers: alice.headers, opened: opening.yield) { m in
                    m.contains { $0.event == "fix" }
                }
                await opening.wait()
                _ = try await Self.fix(server, bob.install, at: nowMs - 5_000)
                let (messages, _) = try await alicesStream
                let streamed = Live.object(try #require(messages.first { $0.event == "fix" }))
                let exact = 52.520_008_1
                #expect(streamed["latitude"] as? Double != exact, "the stream carried Bob's exact position: \(streamed)")
                let view = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers).json()
                let device = try #require((try Self.member(view, "bob")["devices"] as? [[String: Any]])?.first)
                let fix = try #require(device["fix"] as? [String: Any])
                #expect(fix["latitude"] as? Double != exact, "the view carried Bob's exact position: \(fix)")
                #expect(fix["latitude"] as? Double == streamed["latitude"] as? Double, "the view and the stream coarsen alike")
                let own = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, bob.headers).json()
                let mine = try #require((try Self.member(own, "bob")["devices"] as? [[String: Any]])?.first?["fix"] as? [String: Any])
                #expect(mine["latitude"] as? Double == exact, "a member sees themself whole")
            }
        }

        @Test("issue 52: outside a member's hours nothing of them — no position, no status, no fix on the stream", arguments: Backend.all)
        func outsideHoursNothing(_ backend: Backend) async throws {
            let clock = Self.clock()  // 13:13 Europe/Berlin (CEST) on 2026-06-15
            try await withServer(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let id = try await Self.circle(server, alice, with: [bob])
                let nowMs = WireTimestamp(clock.now()).millis
                _ = try await Self.fix(server, bob.install, at: nowMs - 60_000)  // taken before he set his hours
                let set = try await Self.send(
                    server, "PUT", "/v1/circles/\(id)/members/bob/sharing", #"{"hours":"18:00-22:00","time_zone":"Europe/Berlin"}"#,
                    bob.headers)
                #expect(set.status == 200, "\(set.text)")
                let view = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers)
                let b = try Self.member(try view.json(), "bob")
                #expect(b["state"] as? String == "outside_hours")
                #expect((b["devices"] as? [Any])?.isEmpty == true && b["last_seen_at"] is NSNull, "\(b)")
                #expect(!view.text.contains(bob.install.wireString), "the view named Bob's device: \(view.text)")
                // On the stream: Bob's fix now, then Alice's; only Alice's arrives.
                let url = server.base + "/v1/circles/\(id)/live"
                let opening = Opening()
                async let alicesStream = Self.stream(url, headers: alice.headers, opened: opening.yield) { m in
                    m.contains { $0.event == "fix" }
                }
                await opening.wait()
                let bobs = try await Self.fix(server, bob.install, at: nowMs - 2_000)
                let alices = try await Self.fix(server, alice.install, at: nowMs - 1_000)
                let (messages, _) = try await alicesStream
                let fixes = messages.filter { $0.event == "fix" }.compactMap(Live.fixID)
                #expect(fixes == [alices], "Bob's fix \(bobs) reached the stream outside his hours")
                #expect(!messages.contains { $0.data.contains(bob.install.wireString) }, "the stream named Bob's device")
            }
        }

        @Test("issue 52: an invitation is used once, expires, and joins nobody twice", arguments: Backend.all)
        func invitationsAreOneUse(_ backend: Backend) async throws {
            let clock = Self.clock()
            try await withRouter(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let carol = try await Self.member(server, "carol")
                let id = try await Self.circle(server, alice)
                let code = try await Self.invite(server, id, alice.headers)
                #expect(try await Self.join(server, code, bob).status == 200)
                let used = try await Self.join(server, code, carol)
                #expect(used.status == 400, "\(used.text)")
                #expect(try used.json()["error"] as? String == "invalid_invitation")
                let again = try await Self.join(server, try await Self.invite(server, id, alice.headers), bob)
                #expect(try again.json()["joined"] as? Bool == false, "already a member: \(again.text)")
                let short = try await Self.invite(server, id, alice.headers, #"{"expires_in_seconds":60}"#)
                clock.advance(by: .seconds(61))
                let expired = try await Self.join(server, short, carol)
                #expect(expired.status == 400, "\(expired.text)")
                #expect(try await Self.send(server, "GET", "/v1/circles/\(id)", nil, carol.headers).status == 404)
                // Bounds: names, lifetimes.
                let long = String(repeating: "é", count: 51)  // 102 bytes
                #expect(try await Self.send(server, "POST", "/v1/circles", #"{"name":"\#(long)"}"#, alice.headers).status == 400)
                #expect(try await Self.send(server, "POST", "/v1/circles", #"{"name":""}"#, alice.headers).status == 400)
                #expect(
                    try await Self.send(server, "POST", "/v1/circles/\(id)/invitations", #"{"expires_in_seconds":59}"#, alice.headers)
                        .status == 400)
                #expect(try await Self.send(server, "PUT", "/v1/me", #"{"display_name":"\#(long)"}"#, bob.headers).status == 400)
                // Present means typed (schemathesis found an explicit null accepted as absent).
                #expect(
                    try await Self.send(server, "POST", "/v1/circles/\(id)/invitations", #"{"expires_in_seconds":null}"#, alice.headers)
                        .status == 400)
                #expect(try await Self.send(server, "POST", "/v1/circles", #"{"name":"x","owner":null}"#, alice.headers).status == 400)
                #expect(
                    try await Self.send(server, "PUT", "/v1/circles/\(id)/members/bob/sharing", #"{"paused":null}"#, bob.headers)
                        .status == 400)
                #expect(
                    try await Self.send(server, "PUT", "/v1/circles/\(id)/members/bob/sharing", #"{"hours":"07:00-19:00"}"#, bob.headers)
                        .status == 400)
            }
        }

        // MARK: Waking

        @Test(
            "issue 52: a wake-up asks each other device once: coalesced while open, 20 minutes apart, 3 per viewer back to back",
            arguments: Backend.all)
        func wakeIsCoalescedAndLimited(_ backend: Backend) async throws {
            let clock = Self.clock()
            let configure: (inout IngestConfiguration) -> Void = {
                Identity.required(&$0)
                $0.accessTokenTTLSeconds = 86_400  // the clock moves past 20 minutes
            }
            try await withRouter(backend, configure: configure, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let carol = try await Self.member(server, "carol")
                let id = try await Self.circle(server, alice, with: [bob, carol])
                func wake(_ who: Member) async throws -> [String: String] {
                    let r = try await Self.send(server, "POST", "/v1/circles/\(id)/wake", nil, who.headers)
                    #expect(r.status == 202, "\(r.text)")
                    var out: [String: String] = [:]
                    for m in try #require(try r.json()["members"] as? [[String: Any]]) {
                        for d in (m["devices"] as? [[String: Any]]) ?? [] { out[m["person"] as! String] = d["wake"] as? String }
                    }
                    return out
                }
                #expect(try await wake(alice) == ["alice": "not_asked", "bob": "requested", "carol": "requested"])
                // Carol opens the map at once: Bob's request is open, so he gets no second one.
                #expect(try await wake(carol) == ["alice": "requested", "bob": "coalesced", "carol": "not_asked"])
                // Expired (120 s), Bob's device may not be woken again within 20 minutes.
                clock.advance(by: .seconds(121))
                #expect(try await wake(alice)["bob"] == "rate_limited")
                clock.advance(by: .seconds(20 * 60))
                #expect(try await wake(alice)["bob"] == "requested")
                // Alice wakes 3 times back to back (one per 5 minutes refills): the 4th asks nobody.
                #expect(try await wake(alice)["bob"] == "coalesced")
                #expect(try await wake(alice)["bob"] == "coalesced")
                #expect(try await wake(alice)["bob"] == "viewer_limited")
                // The view shows each member's request state.
                let view = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers).json()
                let request = try #require(
                    (try Self.member(view, "bob")["devices"] as? [[String: Any]])?.first?["request"] as? [String: Any])
                #expect(request["state"] as? String == "pending", "\(request)")
            }
        }

        @Test(
            "issue 52: a paused member shows paused with a reason, never a position; nor a device that said sharing_off",
            arguments: Backend.all)
        func pausedShowsPaused(_ backend: Backend) async throws {
            let clock = Self.clock()
            try await withRouter(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Self.member(server, "alice")
                let bob = try await Self.member(server, "bob")
                let carol = try await Self.member(server, "carol")
                let id = try await Self.circle(server, alice, with: [bob, carol])
                let nowMs = WireTimestamp(clock.now()).millis
                _ = try await Self.fix(server, bob.install, at: nowMs - 60_000)
                _ = try await Self.fix(server, carol.install, at: nowMs - 60_000)
                #expect(
                    try await Self.send(server, "PUT", "/v1/circles/\(id)/members/bob/sharing", #"{"paused":true}"#, bob.headers).status
                        == 200)
                // Carol's device refuses the wake-up: her sharing is off on the phone.
                let woke = try await Self.send(server, "POST", "/v1/circles/\(id)/wake", nil, alice.headers)
                let carols = try #require((try Self.member(try woke.json(), "carol")["devices"] as? [[String: Any]])?.first)
                let request = try #require((carols["request"] as? [String: Any])?["id"] as? String)
                let refused = try await Self.send(
                    server, "POST", "/v1/devices/\(carol.install.wireString)/locate/\(request)/answer",
                    #"{"outcome":"refused","reason":"sharing_off"}"#, carol.headers)
                #expect(refused.status == 200, "\(refused.text)")
                let view = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers)
                for (person, reason) in [("bob", "paused"), ("carol", "sharing_off")] {
                    let m = try Self.member(try view.json(), person)
                    #expect(m["state"] as? String == "paused", "\(person): \(m)")
                    #expect(m["paused_reason"] as? String == reason)
                    #expect(m["paused_since"] is String)
                    #expect((m["devices"] as? [Any])?.isEmpty == true && m["last_seen_at"] is NSNull, "\(person): \(m)")
                }
                #expect(!view.text.contains("52.52"), "a paused member's position was shown: \(view.text)")
            }
        }
    }
}
