import BeekonChaos
@testable import BeekonIngest
import BeekonPrimitives
import BeekonWire
import Crypto
import Foundation
import Testing
import _CryptoExtras

extension Ingest.Push {
    /// XR-6: a new token replaces the old one (the next push goes to it); APNs 410 `Unregistered`
    /// removes the token (the failure is on the request and in /metrics; the next request keeps
    /// today's path, no push); 429 is retried after a back-off and then pushed.
    @Test(arguments: Backend.all)
    func tokenRotationUnregisteredAndBackOff(_ backend: Backend) async throws {
        let script = Locked<[Int]>([429, 200, 410])
        let rig = try await Rig.make { _ in
            let status = script.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
            let reason = [410: "Unregistered", 429: "TooManyRequests"][status]
            return StubResponse(status: status, body: reason.map { #"{"reason":"\#($0)"}"# } ?? "")
        }
        defer { Task { try? await rig.stub.stop() } }
        try await withRouter(backend, configure: { rig.apns(&$0) }, now: { rig.clock.now() }) { server, _ in
            let install = Fixtures.ids.next()
            let old = String(repeating: "01", count: 32)
            #expect(try await Self.register(server, install, Self.apnsToken(old)).status == 204)
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)  // rotated

            // 429 first: retried after a back-off, then accepted.
            let first = try await Self.locate(server, install)
            let pushed = try await Self.wait(server, install, first) { $0["state"] as? String == "pushed" }
            #expect(pushed["push_error"] is NSNull)
            #expect(rig.stub.requests.map(\.path) == ["/3/device/\(Self.deviceToken)", "/3/device/\(Self.deviceToken)"])
            #expect(try await Self.metric(server, "apns", "retried") == 1)

            // 410 Unregistered: the token goes; the request keeps waiting on today's path, with the reason.
            let second = try await Self.locate(server, install)
            let failed = try await Self.wait(server, install, second) { !($0["push_error"] is NSNull) }
            #expect(failed["state"] as? String == "pending")
            #expect((failed["push_error"] as? String)?.contains("apns 410 Unregistered") == true, "\(failed)")
            #expect(try await Self.metric(server, "apns", "token_removed") == 1)

            let third = try await Self.locate(server, install)
            let commands = try await server.send("GET", "/v1/devices/\(install.wireString)/commands?wait=0").text
            #expect(commands.contains(third), "no token: the command channel still hands it out")
            #expect(rig.stub.requests.count == 3, "no push without a token")
            #expect(try await Self.get(server, install, third)["push_error"] is NSNull)

            // Registering again brings pushes back; DELETE removes the token.
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)
            let fourth = try await Self.locate(server, install)
            _ = try await Self.wait(server, install, fourth) { $0["state"] as? String == "pushed" }
            #expect(try await server.send("DELETE", "/v1/devices/\(install.wireString)/push-token").status == 204)
            let fifth = try await Self.locate(server, install)
            _ = try await server.send("GET", "/v1/devices/\(install.wireString)/commands?wait=0")
            #expect(try await Self.get(server, install, fifth)["state"] as? String == "delivered")
            #expect(rig.stub.requests.count == 4)
        }
    }

    /// XR-6: a key APNs refuses (403 InvalidProviderToken) disables the sender once: later
    /// requests send nothing and carry the reason, and the reason is logged once, as an error;
    /// an unreadable key disables it at start (one error logged).
    @Test func badKeyDisablesTheSender() async throws {
        let rig = try await Rig.make { _ in StubResponse(status: 403, body: #"{"reason":"InvalidProviderToken"}"#) }
        defer { Task { try? await rig.stub.stop() } }
        let refusedLog = LogCapture()
        try await withRouter(.sqlite, configure: { rig.apns(&$0) }, now: { rig.clock.now() }, logger: refusedLog.logger) { server, _ in
            let install = Fixtures.ids.next()
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)
            let first = try await Self.locate(server, install)
            let refused = try await Self.wait(server, install, first) { !($0["push_error"] is NSNull) }
            #expect((refused["push_error"] as? String)?.contains("apns sender disabled: apns 403 InvalidProviderToken") == true)
            let second = try await Self.locate(server, install)
            let skipped = try await Self.wait(server, install, second) { !($0["push_error"] is NSNull) }
            #expect((skipped["push_error"] as? String)?.contains("disabled") == true)
            #expect(rig.stub.requests.count == 1, "a disabled sender sends nothing")
            #expect(try await Self.metric(server, "apns", "disabled") == 2)
        }
        #expect(
            refusedLog.lines.filter { $0.contains("sender disabled") } == [
                "error APNs sender disabled: apns 403 InvalidProviderToken — no APNs pushes are sent until the server is restarted with a valid key"
            ], "\(refusedLog.lines)")
        try "not a key".write(toFile: rig.dir.path("bad.p8"), atomically: true, encoding: .utf8)
        let unreadableLog = LogCapture()
        try await withRouter(.sqlite, configure: { rig.apns(&$0, keyPath: rig.dir.path("bad.p8")) }, logger: unreadableLog.logger) {
            server, _ in
            let install = Fixtures.ids.next()
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)
            let id = try await Self.locate(server, install)
            let r = try await Self.wait(server, install, id) { !($0["push_error"] is NSNull) }
            #expect((r["push_error"] as? String)?.contains("not a readable PKCS#8 P-256 (.p8) key") == true, "\(r)")
            #expect(rig.stub.requests.count == 1)
        }
        let disabled = unreadableLog.lines.filter { $0.contains("sender disabled") }
        #expect(disabled.count == 1, "\(unreadableLog.lines)")
        #expect(
            disabled.first?.hasPrefix(
                "error APNs sender disabled: the key at \(rig.dir.path("bad.p8")) is not a readable PKCS#8 P-256 (.p8) key") == true)
        #expect(disabled.first?.hasSuffix("no APNs pushes are sent until the server is restarted with a valid key") == true)
    }

    /// BY-7, XR-2, XR-6: a share can never read (or set) a push token: no route returns one, the
    /// token routes refuse a share's credential, and nothing a share can read contains it.
    @Test func aShareNeverReadsAToken() async throws {
        try await withRouter(
            .sqlite,
            configure: {
                $0.authMode = .required
                $0.apiKeys = ["admin-k"]
                $0.locateIntervalSeconds = 0
            }
        ) { server, _ in
            let admin = ["X-API-Key": "admin-k"]
            let install = Fixtures.ids.next()
            #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(2), install: install), headers: admin).status == 200)
            #expect(try await Self.register(server, install, Self.apnsToken(), headers: admin).status == 204)
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 401)
            let share = try await Ingest.Shares.createShare(server, #"{"devices":["\#(install.wireString)"],"locate":true}"#)
            let bearer = ["Authorization": "Bearer \(share.token)"]
            let path = "/v1/devices/\(install.wireString)/push-token"
            #expect(try await server.send("GET", path, headers: bearer).status == 405)
            #expect(
                try await Self.register(server, install, Self.apnsToken(String(repeating: "cd", count: 32)), headers: bearer).status == 401)
            #expect(try await server.send("DELETE", path, headers: bearer).status == 401)
            let id = try await Self.locate(server, install, headers: bearer)
            var seen = ""
            for url in [
                "/v1/devices", "/v1/devices/\(install.wireString)", "/v1/devices/\(install.wireString)/fixes",
                "/v1/devices/\(install.wireString)/locate/\(id)",
            ] {
                seen += try await server.send("GET", url, headers: bearer).text
            }
            #expect(!seen.isEmpty && !seen.contains(Self.deviceToken))
        }
    }

    /// The registration body is validated (XR-3).
    @Test func registrationIsValidated() throws {
        let install = UUID()
        for bad in [
            "", "{}", #"{"provider":"apns","token":"zz","environment":"sandbox","topic":"a.b"}"#,
            #"{"provider":"apns","token":"\#(Self.deviceToken)","environment":"staging","topic":"a.b"}"#,
            #"{"provider":"apns","token":"\#(Self.deviceToken)","environment":"sandbox"}"#,
            #"{"provider":"fcm","token":"has space"}"#, #"{"provider":"webpush","token":"x"}"#,
        ] {
            guard case .failure = PushToken.parse(Array(bad.utf8), installId: install, nowMillis: 0) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
        let ok = try PushToken.parse(Array(Self.apnsToken(env: "production").utf8), installId: install, nowMillis: 5).get()
        #expect(ok.provider == .apns && ok.environment == .production && ok.topic == Self.topic && ok.token == Self.deviceToken)
    }

    /// APNs statuses as Apple documents them (see `APNsSender.outcome`).
    @Test func apnsStatusHandling() {
        #expect(APNsSender.outcome(status: 200, reason: nil) == .sent)
        #expect(APNsSender.outcome(status: 410, reason: "Unregistered") == .tokenInvalid(reason: "apns 410 Unregistered"))
        #expect(APNsSender.outcome(status: 400, reason: "BadDeviceToken") == .tokenInvalid(reason: "apns 400 BadDeviceToken"))
        #expect(APNsSender.outcome(status: 400, reason: "BadTopic") == .failed(reason: "apns 400 BadTopic"))
        #expect(APNsSender.outcome(status: 403, reason: "InvalidProviderToken") == .disabled(reason: "apns 403 InvalidProviderToken"))
        #expect(APNsSender.outcome(status: 413, reason: "PayloadTooLarge") == .failed(reason: "apns 413 PayloadTooLarge"))
        for status in [429, 500, 503] {
            guard case .retry = APNsSender.outcome(status: status, reason: nil) else {
                Issue.record("\(status) is not retried")
                continue
            }
        }
        #expect(FCMSender.outcome(status: 404, errorCode: "UNREGISTERED", retryAfter: nil) == .tokenInvalid(reason: "fcm 404 UNREGISTERED"))
        #expect(
            FCMSender.outcome(status: 429, errorCode: "QUOTA_EXCEEDED", retryAfter: .seconds(7))
                == .retry(reason: "fcm 429 QUOTA_EXCEEDED", after: .seconds(7)))
    }
}

extension Ingest.Push {
    /// XR-6, BY-2: the per-device locate rate limit also bounds pushes (a refused request sends none).
    @Test func theRateLimitBoundsPushes() async throws {
        let rig = try await Rig.make { _ in StubResponse(status: 200) }
        defer { Task { try? await rig.stub.stop() } }
        let configure: (inout IngestConfiguration) -> Void = {
            rig.apns(&$0)
            $0.locateIntervalSeconds = 60
            $0.locateBurst = 1
        }
        try await withRouter(.sqlite, configure: configure, now: { rig.clock.now() }) { server, _ in
            let install = Fixtures.ids.next()
            #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)
            let id = try await Self.locate(server, install)
            _ = try await Self.wait(server, install, id) { $0["state"] as? String == "pushed" }
            let limited = try await server.send("POST", "/v1/devices/\(install.wireString)/locate")
            #expect(limited.status == 429)
            rig.clock.advance(by: .seconds(61))
            let next = try await Self.locate(server, install)
            _ = try await Self.wait(server, install, next) { $0["state"] as? String == "pushed" }
            #expect(rig.stub.requests.count == 2, "one push per created request, none for the refused one")
        }
    }
}
