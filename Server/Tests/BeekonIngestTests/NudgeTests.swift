@testable import BeekonIngest
import BeekonPrimitives
import BeekonTesting
import BeekonWire
import Foundation
import Testing
import _CryptoExtras

extension Ingest {
    /// Nudges for apps that stopped: a device silent for longer than its declared intervals allow
    /// gets at most one visible notification a day through its push token, the bookkeeping
    /// survives a restart, and viewers see "paused since …". The senders are the locate pushes' (`PushDispatcher`)
    /// against local HTTP/2 + TLS stand-ins (`StubHTTP2Server`); every time is the test clock's.
    @Suite struct Nudges {
        /// A device's token (64 hex digits, one per device).
        static func apnsToken(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

        /// A 60-second reporting interval and a 10-minute floor: nudges are due 601 s after the last contact.
        static let policy = NudgePolicy(minimumSilenceSeconds: 600)

        /// Opens a store on `db` (a new store object: a restart), migrated, with its services running.
        static func withStore<T: Sendable>(_ db: TestDatabase, _ body: @Sendable (any LocationStore) async throws -> T) async throws -> T {
            let store = try IngestServer.makeStore(
                IngestConfiguration(database: db.location, databaseTimeoutSeconds: testDatabaseTimeout), logger: testLogger)
            return try await IngestServer.withServices(store.services, logger: testLogger) {
                try await store.migrate()
                return try await body(store)
            }
        }

        /// A nudger over `store` whose senders are `push`, on `clock`; its candidates are read from
        /// the store (the server's come from the status monitor's memory). The dispatcher runs for
        /// `body` only (its HTTP client is shut down after).
        static func withNudger<T: Sendable>(
            _ store: any LocationStore, _ push: PushConfiguration, _ clock: TestClock, policy: NudgePolicy = policy,
            metrics: IngestMetrics = IngestMetrics(), _ body: @Sendable (DeviceNudger) async throws -> T
        ) async throws -> T {
            let now: @Sendable () -> Date = { clock.now() }
            let locates = LocateService(
                store: store.locates, limit: LocateRateLimit(intervalSeconds: 0, burst: 1), expirySeconds: 120, now: now,
                makeID: { Fixtures.ids.next() })
            let pushes = PushDispatcher(push, tokens: store.pushTokens, locates: locates, metrics: metrics, now: now, logger: testLogger)
            let running = Task { try await pushes.run() }
            defer { running.cancel() }
            let nudger = DeviceNudger(
                store: store, pushes: pushes, policy: policy, candidates: { (try? await store.deviceTimes(installId: nil)) ?? [] },
                interval: .seconds(60), now: now, makeID: { Fixtures.ids.next() }, logger: testLogger)
            let result = try await body(nudger)
            running.cancel()
            _ = try? await running.value
            return result
        }

        /// One upload from `install` received now, declaring `interval` (nil: none).
        static func report(_ store: any LocationStore, _ install: UUID, interval: Int?, _ clock: TestClock) async throws {
            let nowMs = WireTimestamp(clock.now()).millis
            var e = Fixtures.envelope(Fixtures.locations(1, startMillis: nowMs - 1_000), install: install)
            e.device.syncIntervalSeconds = interval
            _ = try await store.ingest(IngestBatch(envelope: e, receivedAt: WireTimestamp(clock.now())))
        }

        static func registerAPNs(_ store: any LocationStore, _ install: UUID, _ token: String, _ clock: TestClock) async throws {
            try await store.pushTokens.setPushToken(
                PushToken(
                    installId: install, provider: .apns, token: token, environment: .sandbox, topic: Push.topic,
                    updatedAtMillis: WireTimestamp(clock.now()).millis))
        }

        /// What APNs must get for a nudge, as Apple documents an alert push: nil when all holds.
        static func alertProblem(_ r: StubRequest, token: String, text: WireNudgePush = policy.text) -> String? {
            guard r.majorVersion == 2, r.method == "POST", r.path == "/3/device/\(token)" else { return "request \(r.method) \(r.path)" }
            guard r.header("apns-push-type") == "alert", r.header("apns-priority") == "5", r.header("apns-topic") == Push.topic,
                r.header("apns-collapse-id") == WireNudgePush.threadID, r.header("apns-expiration") != nil,
                r.header("authorization")?.hasPrefix("bearer ") == true
            else { return "headers \(r.headers)" }
            guard let aps = r.json?["aps"] as? [String: Any], aps["content-available"] == nil, aps["alert"] is [String: Any],
                WireNudgePush(apnsJSON: Data(r.body)) == text
            else { return "payload \(String(decoding: r.body, as: UTF8.self))" }
            return nil
        }

        /// The once-a-day rule, alone: a silence gets one nudge a day, `limit` of them; a new
        /// silence (the device reported since) starts the count again, but never sooner than a
        /// day after the last nudge.
        @Test func policyAllowsOneADayAndStopsAfterTheLimit() {
            let p = NudgePolicy(minimumSilenceSeconds: 3600, everySeconds: 86_400, limit: 2)
            let day: Int64 = 86_400_000
            let first = p.verdict(previous: nil, silentSinceMillis: 0, nowMillis: 10 * day)
            #expect(first == .send(NudgeRecord(silentSinceMillis: 0, sentAtMillis: 10 * day, count: 1)))
            let r1 = NudgeRecord(silentSinceMillis: 0, sentAtMillis: 10 * day, count: 1)
            #expect(p.verdict(previous: r1, silentSinceMillis: 0, nowMillis: 11 * day - 1) == .wait(untilMillis: 11 * day))
            let r2 = NudgeRecord(silentSinceMillis: 0, sentAtMillis: 11 * day, count: 2)
            #expect(p.verdict(previous: r1, silentSinceMillis: 0, nowMillis: 11 * day) == .send(r2))
            #expect(p.verdict(previous: r2, silentSinceMillis: 0, nowMillis: 13 * day) == .done)
            // The device reported at day 12 and fell silent again: a new count.
            #expect(
                p.verdict(previous: r2, silentSinceMillis: 12 * day, nowMillis: 13 * day)
                    == .send(NudgeRecord(silentSinceMillis: 12 * day, sentAtMillis: 13 * day, count: 1)))
            // Due: past twice the declared interval and past the floor, whichever is later.
            let t = DeviceTimes(installId: Fixtures.ids.next(), lastFixMillis: nil, lastContactMillis: 0, expectedSeconds: 60)
            #expect(p.dueMillis(t) == 3_600_001)
            #expect(
                p.dueMillis(DeviceTimes(installId: t.installId, lastFixMillis: nil, lastContactMillis: 0, expectedSeconds: 7200))
                    == 14_400_001)
            #expect(p.dueMillis(DeviceTimes(installId: t.installId, lastFixMillis: nil, lastContactMillis: 0, expectedSeconds: nil)) == nil)
        }

        /// The acceptance case, on both stores: a device silent past its interval gets exactly one
        /// alert push; none again the same day, also after a restart (a new store object and a new
        /// nudger: nothing kept in memory); one again the next day. A device that never declared an
        /// interval, one without a push token and a revoked one get none; viewers read
        /// `paused_since` for the silent device that declared its interval.
        @Test(arguments: Backend.all)
        func silentDeviceGetsOneAlertADayAcrossARestart(_ backend: Backend) async throws {
            let rig = try await Push.Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            var config = IngestConfiguration(database: .sqlite(path: "unused"))
            rig.apns(&config)
            let push = config.push
            let clock = rig.clock
            let db = try await backend.freshDatabase()
            defer { db.remove() }
            let (silent, undeclared, tokenless, revoked) = (
                Fixtures.ids.next(), Fixtures.ids.next(), Fixtures.ids.next(), Fixtures.ids.next()
            )
            let contact = WireTimestamp(clock.now()).millis

            try await Self.withStore(db) { store in
                for id in [silent, tokenless, revoked] { try await Self.report(store, id, interval: 60, clock) }
                try await Self.report(store, undeclared, interval: nil, clock)
                try await Self.registerAPNs(store, silent, Self.apnsToken(1), clock)
                try await Self.registerAPNs(store, undeclared, Self.apnsToken(2), clock)
                try await Self.registerAPNs(store, revoked, Self.apnsToken(4), clock)
                _ = try await store.tokens.revokeDevice(installId: revoked, nowMillis: contact)
                try await Self.withNudger(store, push, clock) { nudger in
                    clock.advance(by: .seconds(300))  // silent by its interval (120 s), not yet past the floor
                    #expect(await nudger.pass().isEmpty)
                    clock.advance(by: .seconds(301))
                    let sent = await nudger.pass()
                    #expect(sent.map(\.installId) == [silent], "only the silent device with an interval, a token and no revocation")
                    #expect(sent.map(\.outcome) == [.sent])
                    #expect(rig.stub.requests.count == 1)
                    if let r = rig.stub.requests.first { #expect(Self.alertProblem(r, token: Self.apnsToken(1)) == nil) }
                    clock.advance(by: .seconds(3600))
                    #expect(await nudger.pass().isEmpty, "one a day")
                }
                let times = try await store.deviceTimes(installId: nil)
                let paused = Dictionary(
                    uniqueKeysWithValues: times.map { ($0.installId, $0.pausedSinceMillis(nowMillis: WireTimestamp(clock.now()).millis)) })
                #expect(paused[silent] == .some(contact), "paused since its last contact")
                #expect(paused[undeclared] == .some(nil), "no declared interval: silent, never called paused")
                #expect(try await store.nudges.nudgeRecord(installId: silent)?.count == 1)
            }
            // A restart: a new store object and a new nudger, two hours later the same day.
            clock.advance(by: .seconds(7200))
            try await Self.withStore(db) { store in
                try await Self.withNudger(store, push, clock) { nudger in
                    #expect(await nudger.pass().isEmpty, "the day's nudge was stored, not kept in memory")
                    #expect(rig.stub.requests.count == 1)
                    // The next day (a day after the first nudge): one more, to the same token.
                    clock.advance(by: .seconds(86_400 - 3600 - 7200))
                    let sent = await nudger.pass()
                    #expect(sent.map(\.installId) == [silent])
                    #expect(rig.stub.requests.count == 2)
                    if rig.stub.requests.count == 2 { #expect(Self.alertProblem(rig.stub.requests[1], token: Self.apnsToken(1)) == nil) }
                    #expect(await nudger.pass().isEmpty)
                }
            }
        }

        /// FCM: the nudge is a notification message (title and body, shown by the system), with the
        /// data map that marks it as Beekon's, at normal priority, kept a day, tagged so that the
        /// next one replaces it; the token endpoint and sender are the locate pushes'.
        @Test func fcmNudgeIsANotificationMessage() async throws {
            let rig = try await Push.Rig.make { r in
                if r.path == "/token" {
                    return StubResponse(status: 200, body: #"{"access_token":"ya29.local","expires_in":3600,"token_type":"Bearer"}"#)
                }
                return StubResponse(status: 200, body: #"{"name":"projects/beekon-test/messages/1"}"#)
            }
            defer { Task { try? await rig.stub.stop() } }
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let account: [String: String] = [
                "type": "service_account", "project_id": "beekon-test", "private_key_id": "kid-1",
                "private_key": rsa.pkcs8PEMRepresentation, "client_email": "beekon@beekon-test.iam.gserviceaccount.com",
                "token_uri": rig.stub.base + "/token",
            ]
            try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: rig.dir.path("sa.json")))
            var fcm = PushConfiguration(
                fcm: FCMConfiguration(serviceAccountPath: rig.dir.path("sa.json"), endpoint: rig.stub.base), caFile: rig.pki.ca)
            fcm.retryBaseSeconds = 0.01
            let push = fcm
            let clock = rig.clock
            let db = try await Backend.sqlite.freshDatabase()
            defer { db.remove() }
            let device = Fixtures.ids.next()
            try await Self.withStore(db) { store in
                try await Self.report(store, device, interval: 60, clock)
                try await store.pushTokens.setPushToken(
                    PushToken(installId: device, provider: .fcm, token: "fcm:device-1", updatedAtMillis: WireTimestamp(clock.now()).millis))
                try await Self.withNudger(store, push, clock) { nudger in
                    clock.advance(by: .seconds(601))
                    #expect(await nudger.pass().map(\.outcome) == [.sent])
                    #expect(await nudger.pass().isEmpty)
                }
            }
            let sends = rig.stub.requests.filter { $0.path == "/v1/projects/beekon-test/messages:send" }
            #expect(sends.count == 1)
            let message = try #require(sends.first?.json?["message"] as? [String: Any])
            #expect(message["token"] as? String == "fcm:device-1")
            let notification = try #require(message["notification"] as? [String: Any])
            #expect(notification["title"] as? String == Self.policy.text.title && notification["body"] as? String == Self.policy.text.body)
            #expect(message["data"] as? [String: String] == ["beekon_type": "nudge"])
            #expect(WireNudgePush.isNudge(userInfo: (message["data"] as? [String: String] ?? [:]) as [AnyHashable: Any]))
            let android = try #require(message["android"] as? [String: Any])
            #expect(android["priority"] as? String == "normal" && android["ttl"] as? String == "86400s")
            #expect((android["notification"] as? [String: Any])?["tag"] as? String == WireNudgePush.threadID)
        }

        /// The attack: device A, with its own credential, tries to aim nudges at another device's
        /// token or at another app. It cannot register a token for B's install (403), cannot name an
        /// app the server does not push to (400), cannot upload as B (403) and cannot put text into
        /// the alert (the operator's text only, whatever A's model string says). When A registers
        /// B's token string as its own, the token is A's alone: one phone, one nudge a day — never
        /// one per install that once held its token.
        @Test(arguments: Backend.all)
        func aDeviceCannotAimNudgesAtAnotherDeviceOrApp(_ backend: Backend) async throws {
            let rig = try await Push.Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            let (a, b) = (Fixtures.ids.next(), Fixtures.ids.next())
            let tokenA = Self.apnsToken(0xa1)
            let tokenB = Self.apnsToken(0xb2)
            let configure: (inout IngestConfiguration) -> Void = {
                rig.apns(&$0)
                DeviceIdentity.required(&$0)
                $0.nudges = nil  // the passes below run on the test clock, one at a time
            }
            let registration: @Sendable (String, String) -> [UInt8] = { token, topic in
                Array(#"{"provider":"apns","token":"\#(token)","environment":"sandbox","topic":"\#(topic)"}"#.utf8)
            }
            try await withRouter(backend, configure: configure) { server, db in
                let asA = DeviceIdentity.bearer(try await DeviceIdentity.seed(db, subject: "phone-a", install: a).accessToken)
                let asB = DeviceIdentity.bearer(try await DeviceIdentity.seed(db, subject: "phone-b", install: b).accessToken)
                var envelopeA = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(Date()).millis - 1_000), install: a)
                envelopeA.device.syncIntervalSeconds = 60
                envelopeA.device.model = "Open the attacker's site now"
                var envelopeB = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(Date()).millis - 1_000), install: b)
                envelopeB.device.syncIntervalSeconds = 60
                #expect(try await HTTP.upload(server, envelopeA, headers: asA).status == 200)
                #expect(try await HTTP.upload(server, envelopeB, headers: asB).status == 200)
                let path = { (id: UUID) in "/v1/devices/\(id.wireString)/push-token" }
                let json = ["Content-Type": "application/json"]
                #expect(
                    try await server.send("PUT", path(b), body: registration(tokenB, Push.topic), headers: json.merging(asB) { $1 }).status
                        == 204)
                // A's token on B's install, B's token replaced or removed: refused.
                #expect(
                    try await server.send("PUT", path(b), body: registration(tokenA, Push.topic), headers: json.merging(asA) { $1 }).status
                        == 403)
                #expect(try await server.send("DELETE", path(b), headers: asA).status == 403)
                // Another app of the key's team.
                let otherApp = try await server.send(
                    "PUT", path(a), body: registration(tokenA, "com.attacker.other-app"), headers: json.merging(asA) { $1 })
                #expect(otherApp.status == 400)
                // Keeping B silent or alive by uploading as B.
                var forged = envelopeB
                forged.batchId = Fixtures.ids.next()
                #expect(try await HTTP.upload(server, forged, headers: asA).status == 403)
                #expect(
                    try await server.send("PUT", path(a), body: registration(tokenA, Push.topic), headers: json.merging(asA) { $1 }).status
                        == 204)
                // Both fall silent: each is nudged once, at its own token, for the configured app only.
                let clock = TestClock(start: Date())
                clock.advance(by: .seconds(3601))
                try await Self.withStore(db) { store in
                    try await Self.withNudger(store, rig.apnsPush, clock) { nudger in
                        let sent = await nudger.pass()
                        #expect(Set(sent.map(\.installId)) == [a, b])
                    }
                }
                let byToken = Dictionary(grouping: rig.stub.requests) { String($0.path.split(separator: "/").last ?? "") }
                #expect(byToken.mapValues(\.count) == [tokenA: 1, tokenB: 1])
                for (token, requests) in byToken { #expect(Self.alertProblem(requests[0], token: token) == nil) }
                #expect(!rig.stub.requests.contains { String(decoding: $0.body, as: UTF8.self).contains("attacker") })

                // A registers B's token string as its own: the token is A's alone from then on.
                #expect(
                    try await server.send("PUT", path(a), body: registration(tokenB, Push.topic), headers: json.merging(asA) { $1 }).status
                        == 204)
                clock.advance(by: .seconds(86_400))
                try await Self.withStore(db) { store in
                    #expect(try await store.pushTokens.pushToken(installId: b) == nil, "B's row gave the token up")
                    try await Self.withNudger(store, rig.apnsPush, clock) { nudger in
                        #expect(await nudger.pass().map(\.installId) == [a])
                    }
                }
                #expect(rig.stub.requests.filter { $0.path.hasSuffix(tokenB) }.count == 2, "one phone, one nudge a day")
            }
        }

        /// The server wires it up: with a push provider, a device that declared its interval and went
        /// silent is nudged by the running server (its nudger on the server's clock), and the
        /// device list says `paused_since`; a device that reports is neither.
        @Test func runningServerNudgesAndListsPausedSince() async throws {
            let rig = try await Push.Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            let clock = rig.clock
            try await withServer(
                .sqlite,
                configure: {
                    rig.apns(&$0)
                    $0.nudges = Self.policy
                    $0.nudgeCheckSeconds = 0.05
                    $0.statusCheckSeconds = 0.05
                }, now: { clock.now() }
            ) { server, _ in
                // `quiet` reports every minute, `busy` every hour: at 601 s only `quiet` is past its allowance.
                let (quiet, busy) = (Fixtures.ids.next(), Fixtures.ids.next())
                for (id, n, interval) in [(quiet, 1, 60), (busy, 2, 3600)] {
                    var e = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis - 1_000), install: id)
                    e.device.syncIntervalSeconds = interval
                    #expect(try await HTTP.upload(server, e).status == 200)
                    #expect(try await Push.register(server, id, Push.apnsToken(Self.apnsToken(n))).status == 204)
                }
                clock.advance(by: .seconds(601))
                let deadline = ContinuousClock.now + .seconds(60)
                while rig.stub.requests.isEmpty, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(20))  // polling the stand-in, bounded by the deadline
                }
                #expect(rig.stub.requests.map(\.path) == ["/3/device/\(Self.apnsToken(1))"])
                if let r = rig.stub.requests.first { #expect(Self.alertProblem(r, token: Self.apnsToken(1)) == nil) }
                let devices = try #require(try await server.send("GET", "/v1/devices").json()["devices"] as? [[String: Any]])
                let byID = Dictionary(uniqueKeysWithValues: devices.map { ($0["install_id"] as? String ?? "", $0) })
                #expect(byID[quiet.wireString]?["status"] as? String == "silent")
                #expect(byID[quiet.wireString]?["paused_since"] as? String == byID[quiet.wireString]?["last_contact_at"] as? String)
                #expect(byID[busy.wireString]?["status"] as? String == "live" && byID[busy.wireString]?["paused_since"] == nil)
                // The live stream's `device` event says so too, when the device falls silent.
                let events = try await Live.collect(server.base + "/v1/live", lastEventID: "0", kinds: ["device"]) { ms in
                    ms.contains { $0.event == "device" && Live.object($0)["paused_since"] != nil }
                }
                let silentEvent = try #require(events.first { $0.event == "device" && Live.object($0)["paused_since"] != nil })
                #expect(Live.object(silentEvent)["install_id"] as? String == quiet.wireString)
                #expect(Live.object(silentEvent)["status"] as? String == "silent")
                #expect(Live.object(silentEvent)["paused_since"] as? String == byID[quiet.wireString]?["last_contact_at"] as? String)
                let metrics = try await server.send("GET", "/metrics").text
                let sentLine = metrics.split(separator: "\n").first {
                    $0.hasPrefix("beekon_ingest_nudges_total{") && $0.contains(#"provider="apns""#) && $0.contains(#"result="sent""#)
                }
                #expect(sentLine?.hasSuffix(" 1") == true, "\(sentLine ?? "no nudge counter")")
            }
        }
    }
}

extension Ingest.Push.Rig {
    /// The APNs sender configuration `apns(_:)` writes into a server's.
    var apnsPush: PushConfiguration {
        var c = IngestConfiguration(database: .sqlite(path: "unused"))
        apns(&c)
        return c.push
    }
}

extension Ingest {
    /// The admin dashboard shows a device that stopped sharing as "paused since …", not as a
    /// stale state, in a real headless browser; markup in a device's model stays text.
    @Suite(.tags(.browser), .skippable(.browser)) struct NudgeDashboard {
        @Test func rosterSaysPausedSinceForADeviceThatStopped() async throws {
            let clock = TestClock(start: Date())
            try await withServer(.sqlite, configure: { DeviceIdentity.required(&$0) }, now: { clock.now() }) { server, _ in
                let (stopped, hourly) = (Fixtures.ids.next(), Fixtures.ids.next())
                for (id, interval) in [(stopped, 60), (hourly, 3600)] {
                    var e = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis - 1_000), install: id)
                    e.device.syncIntervalSeconds = interval
                    e.device.model = #"<img src=x onerror="document.body.dataset.pwned=1">"#
                    #expect(try await HTTP.upload(server, e, headers: DeviceIdentity.admin).status == 200)
                }
                clock.advance(by: .seconds(601))
                let page = try await HeadlessChromium.launch(server.base + "/#key=admin-k")
                try await page.waitUntil("document.querySelectorAll('tr[data-device]').length === 2", timeout: 90)
                let state = { (id: UUID) in "document.querySelector('tr[data-device=\"\(id.wireString)\"] .state')" }
                #expect(try await page.evaluate("\(state(stopped)).dataset.state", as: String.self) == "paused")
                let text = try await page.evaluate("\(state(stopped)).textContent", as: String.self) ?? ""
                #expect(text.hasPrefix("paused since "), "\(text)")
                #expect(try await page.evaluate("\(state(hourly)).dataset.state", as: String.self) == "live")
                #expect(try await page.evaluate("document.querySelectorAll('#devices img').length", as: Int.self) == 0)
                #expect(try await page.evaluate("document.body.dataset.pwned === undefined", as: Bool.self) == true)
            }
        }
    }
}

extension Ingest.Circles {
    /// A member whose app stopped (every device silent past the interval it declared) shows in
    /// the circle as paused, reason `app_stopped`, since the device's last contact — no position,
    /// no stale dot; an upload makes them sharing again.
    @Test("a member whose app stopped shows paused since its last contact, not a stale dot", arguments: Backend.all)
    func appStoppedShowsPausedSince(_ backend: Backend) async throws {
        let clock = Self.clock()
        try await withRouter(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
            let alice = try await Self.member(server, "alice")
            let bob = try await Self.member(server, "bob")
            let id = try await Self.circle(server, alice, with: [bob])
            @Sendable func report() async throws -> String {
                var e = Fixtures.envelope(
                    Fixtures.locations(1, startMillis: WireTimestamp(clock.now()).millis - 1_000), install: bob.install)
                e.device.syncIntervalSeconds = 60
                #expect(try await HTTP.upload(server, e, headers: bob.headers).status == 200)
                return WireTimestamp(clock.now()).description
            }
            let contact = try await report()
            let sharing = try Self.member(try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers).json(), "bob")
            #expect(sharing["state"] as? String == "sharing", "\(sharing)")
            clock.advance(by: .seconds(121))
            let view = try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers)
            let paused = try Self.member(try view.json(), "bob")
            #expect(paused["state"] as? String == "paused" && paused["paused_reason"] as? String == "app_stopped", "\(paused)")
            #expect(paused["paused_since"] as? String == contact)
            #expect((paused["devices"] as? [Any])?.isEmpty == true, "\(paused)")
            #expect(!view.text.contains("52.52"), "a stopped member's position was shown: \(view.text)")
            _ = try await report()
            let back = try Self.member(try await Self.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers).json(), "bob")
            #expect(back["state"] as? String == "sharing" && back["paused_reason"] is NSNull, "\(back)")
        }
    }
}
