import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

/// Locate on demand (SPEC BY-2, BY-3; issue 15): the lifecycle value type, the rate limit,
/// and the routes over real HTTP on both stores.
@Suite struct LocateLogicTests {
    static let t0: Int64 = 1_781_500_000_000

    static func request(expiresIn: Int64 = 120_000) -> LocateRequest {
        LocateRequest(
            id: UUID(), installId: UUID(), requestedBy: "admin", createdAtMillis: t0, expiresAtMillis: t0 + expiresIn)
    }

    /// BY-2: pending → delivered → answered; a final state never moves again.
    @Test func lifecycleAnswered() {
        var r = Self.request()
        let moved1 = r.apply(.deliver, nowMillis: Self.t0 + 10)
        #expect(moved1)
        #expect(r.state == .delivered && r.deliveredAtMillis == Self.t0 + 10)
        let moved2 = r.apply(.deliver, nowMillis: Self.t0 + 20)
        #expect(!moved2)
        let fix = UUID()
        let moved3 = r.apply(.answer(fixId: fix, fixJSON: "{}"), nowMillis: Self.t0 + 30)
        #expect(moved3)
        #expect(r.state == .answered && r.fixId == fix && r.finishedAtMillis == Self.t0 + 30)
        let moved4 = r.apply(.refuse(reason: "late"), nowMillis: Self.t0 + 40)
        #expect(!moved4)
        let moved5 = r.apply(.expire, nowMillis: Self.t0 + 500_000)
        #expect(!moved5)
        #expect(r.state == .answered)
    }

    /// BY-2: a refusal keeps the device's reason.
    @Test func refusalKeepsReason() {
        var r = Self.request()
        let moved6 = r.apply(.refuse(reason: "sharing_off"), nowMillis: Self.t0 + 1)
        #expect(moved6)
        #expect(r.state == .refused && r.reason == "sharing_off")
    }

    /// BY-2: an answer after the expiry expires the request and is recorded as late; the state stays expired.
    @Test func lateAnswerDoesNotFlipExpired() {
        var r = Self.request(expiresIn: 1_000)
        let fix = UUID()
        let moved7 = r.apply(.answer(fixId: fix, fixJSON: "{}"), nowMillis: Self.t0 + 5_000)
        #expect(moved7)
        #expect(r.state == .expired && r.lateFixId == fix && r.fixId == nil)
        var expired = Self.request(expiresIn: 1_000)
        let moved8 = expired.apply(.expire, nowMillis: Self.t0 + 1_000)
        #expect(moved8)
        let moved9 = expired.apply(.answer(fixId: fix, fixJSON: "{}"), nowMillis: Self.t0 + 9_000)
        #expect(!moved9)
        #expect(expired.state == .expired && expired.lateFixId == fix)
    }

    /// BY-3: a burst of 3, then one per minute; Retry-After says when.
    @Test func rateLimitBurstThenInterval() {
        let limit = LocateRateLimit(intervalSeconds: 60, burst: 3)
        var made: [Int64] = []
        for i in 0..<3 {
            #expect(limit.check(previous: made, nowMillis: Self.t0 + Int64(i)).allowed)
            made.append(Self.t0 + Int64(i))
        }
        let refused = limit.check(previous: made, nowMillis: Self.t0 + 10_000)
        #expect(!refused.allowed && refused.retryAfterSeconds == 50)
        #expect(limit.check(previous: made, nowMillis: Self.t0 + 60_002).allowed)
        #expect(LocateRateLimit(intervalSeconds: 0, burst: 1).check(previous: made, nowMillis: Self.t0).allowed)
    }

    /// BY-3, issue 28: requests stored with a later stamp than the one being checked (they took
    /// the lock first) still count, so a burst never gets more than `burst` through.
    @Test func rateLimitCountsRequestsStampedAfterNow() {
        let limit = LocateRateLimit(intervalSeconds: 3_600, burst: 3)
        let later = [Self.t0 + 5, Self.t0 + 7, Self.t0 + 9]
        #expect(!limit.check(previous: later, nowMillis: Self.t0).allowed)
        #expect(limit.check(previous: Array(later.prefix(2)), nowMillis: Self.t0).allowed)
    }

    /// The map's simplification keeps the ends, drops collinear points and keeps a real corner.
    @Test func simplifierKeepsShape() {
        var points: [TrackPoint] = []
        for i in 0..<1_000 {
            // East for 500 s, then north: one corner, otherwise straight lines with 0.1 m noise.
            let noise = (i % 2 == 0 ? 1.0 : -1.0) * 0.000001
            let lat = i < 500 ? 52.5 + noise : 52.5 + Double(i - 500) * 0.0001
            let lon = i < 500 ? 13.4 + Double(i) * 0.0001 : 13.4 + 0.05 + noise
            points.append(TrackPoint(millis: Int64(i) * 1000, latitude: lat, longitude: lon))
        }
        let simple = TrackSimplifier(toleranceMeters: 5).simplify(points)
        #expect(simple.first == points.first && simple.last == points.last)
        #expect(simple.count <= 5, "\(simple.count) points")
        #expect(simple.contains { abs($0.longitude - 13.45) < 0.0002 && abs($0.latitude - 52.5) < 0.0002 })
        #expect(TrackSimplifier(zoom: 22, latitude: 0).toleranceMeters < 0.05)
        #expect(TrackSimplifier(zoom: 0, latitude: 0).toleranceMeters > 100_000)
    }
}

extension Ingest {
    /// The locate routes over real HTTP (BY-2, BY-3).
    @Suite struct Locate {
        static let admin = ["X-API-Key": "admin-k"]

        static func configure(_ c: inout IngestConfiguration) {
            c.authMode = .required
            c.apiKeys = ["admin-k"]
            c.locateIntervalSeconds = 60
            c.locateBurst = 2
        }

        static func post(_ server: some TestTransport, _ install: UUID, _ headers: [String: String] = admin) async throws -> HTTPResult {
            try await server.send("POST", "/v1/devices/\(install.wireString)/locate", headers: headers)
        }

        static func get(_ server: some TestTransport, _ install: UUID, _ id: String) async throws -> [String: Any] {
            let r = try await server.send("GET", "/v1/devices/\(install.wireString)/locate/\(id)", headers: admin)
            #expect(r.status == 200, "\(r.text)")
            return try r.json()
        }

        /// BY-2: created pending, handed out by the command channel (delivered), answered by an upload
        /// whose fix carries the request id; every change is a `locate` event on the stream; the
        /// ingest answer lists open requests; the third request in a burst of 2 gets 429 + Retry-After.
        @Test(arguments: Backend.all)
        func lifecycleOverHTTP(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withServer(backend, configure: Self.configure, now: { clock.now() }) { server, _ in
                let install = Fixtures.ids.next()
                let created = try await Self.post(server, install)
                #expect(created.status == 202, "\(created.text)")
                let id = try #require(try created.json()["id"] as? String)
                #expect(try created.json()["state"] as? String == "pending")
                #expect(created.headers["location"] == "/v1/devices/\(install.wireString)/locate/\(id)")

                let poll = try await server.send(
                    "GET", "/v1/devices/\(install.wireString)/commands?wait=5", headers: Self.admin)
                let notices = try #require(try poll.json()["locate_requests"] as? [[String: Any]])
                #expect(notices.map { $0["id"] as? String } == [id])
                #expect(try await Self.get(server, install, id)["state"] as? String == "delivered")

                var fix = Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis)[0]
                fix.trigger = .manual
                fix.locateRequestId = UUID(uuidString: id)
                let upload = try await HTTP.upload(server, Fixtures.envelope([fix], install: install), headers: Self.admin)
                #expect(upload.status == 200)
                #expect((try upload.json()["locate_requests"] as? [Any])?.isEmpty == true)
                let answered = try await Self.get(server, install, id)
                #expect(answered["state"] as? String == "answered")
                #expect(answered["fix_id"] as? String == fix.id.wireString)
                #expect((answered["fix"] as? [String: Any])?["locate_request_id"] as? String == id)

                let events = try await Live.collect(
                    server.base + "/v1/live", headers: Self.admin, lastEventID: "0", kinds: ["locate"]
                ) { $0.count >= 3 }
                #expect(events.map { Live.object($0)["state"] as? String } == ["pending", "delivered", "answered"])

                // A second request is piggybacked on the next upload's answer.
                let second = try #require(try await Self.post(server, install).json()["id"] as? String)
                let next = try await HTTP.upload(
                    server, Fixtures.envelope(Fixtures.locations(1), install: install), headers: Self.admin)
                #expect((try next.json()["locate_requests"] as? [[String: Any]])?.first?["id"] as? String == second)

                let limited = try await Self.post(server, install)
                #expect(limited.status == 429)
                #expect(Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)
            }
        }

        /// BY-2: a refusal keeps the device's reason; a share needs `locate` and sees only its devices;
        /// an expired request stays expired when a late answer arrives (the fix is stored).
        @Test(arguments: Backend.all)
        func refusalSharesAndExpiry(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withRouter(backend, configure: Self.configure, now: { clock.now() }) { server, _ in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                let id = try #require(try await Self.post(server, a).json()["id"] as? String)
                let refusal = try await server.send(
                    "POST", "/v1/devices/\(a.wireString)/locate/\(id)/answer",
                    body: Array(#"{"outcome":"refused","reason":"sharing_off"}"#.utf8), headers: Self.admin)
                #expect(refusal.status == 200, "\(refusal.text)")
                let refused = try await Self.get(server, a, id)
                #expect(refused["state"] as? String == "refused" && refused["reason"] as? String == "sharing_off")

                let viewOnly = try await Ingest.Shares.createShare(server, #"{"devices":["\#(a.wireString)"]}"#)
                #expect(try await Self.post(server, a, ["Authorization": "Bearer \(viewOnly.token)"]).status == 403)
                let locating = try await Ingest.Shares.createShare(server, #"{"devices":["\#(a.wireString)"],"locate":true}"#)
                let bearer = ["Authorization": "Bearer \(locating.token)"]
                #expect(try await Self.post(server, b, bearer).status == 404)
                let byShare = try await Self.post(server, a, bearer)
                #expect(byShare.status == 202, "\(byShare.text)")
                let late = try #require(try byShare.json()["id"] as? String)
                #expect(try byShare.json()["requested_by"] as? String == locating.id)

                clock.advance(by: .seconds(121))
                #expect(try await Self.get(server, a, late)["state"] as? String == "expired")
                var fix = Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis)[0]
                fix.locateRequestId = UUID(uuidString: late)
                #expect(try await HTTP.upload(server, Fixtures.envelope([fix], install: a), headers: Self.admin).status == 200)
                let after = try await Self.get(server, a, late)
                #expect(after["state"] as? String == "expired")
                #expect(after["late_fix_id"] as? String == fix.id.wireString)
                let fixes = try await server.send("GET", "/v1/devices/\(a.wireString)/fixes", headers: Self.admin)
                #expect(fixes.text.contains(fix.id.wireString))
            }
        }
    }
}
