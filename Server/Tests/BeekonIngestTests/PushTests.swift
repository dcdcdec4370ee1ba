import BeekonChaos
@testable import BeekonIngest
import BeekonTesting
import BeekonWire
import Crypto
import Foundation
import Testing
import _CryptoExtras

/// Silent pushes for locate requests (SPEC XR-6, BY-2, BY-7; issue 30): device push tokens,
/// the APNs and FCM senders against local HTTP/2 + TLS servers standing where the providers
/// stand, and the locate lifecycle `pending → pushed → answered`.
extension Ingest {
    @Suite struct Push {
        static let keyId = "TESTKEY123"
        static let teamId = "TEAM123456"
        static let topic = "app.beekon.example"
        static let deviceToken = String(repeating: "ab", count: 32)

        /// A local APNs (or FCM) with a fresh PKI, a `.p8` key and a server configured to use them.
        /// Immutable after `make` (the key type is not `Sendable`, hence unchecked).
        struct Rig: @unchecked Sendable {
            let dir: ChaosDir
            let pki: TestPKI
            let stub: StubHTTP2Server
            let key: P256.Signing.PrivateKey
            let clock = TestClock()

            static func make(handle: @escaping @Sendable (StubRequest) -> StubResponse) async throws -> Rig {
                let dir = try ChaosDir()
                let pki = try await TestPKI.make(in: dir)
                let key = P256.Signing.PrivateKey()
                // A `.p8` is the PKCS#8 PEM of the key (`-----BEGIN PRIVATE KEY-----`).
                try key.pemRepresentation.write(toFile: dir.path("AuthKey_\(Push.keyId).p8"), atomically: true, encoding: .utf8)
                return Rig(dir: dir, pki: pki, stub: try await StubHTTP2Server.start(pki: pki, handle: handle), key: key)
            }

            func apns(_ c: inout IngestConfiguration, keyPath: String? = nil) {
                c.push.apns = APNsConfiguration(
                    keyPath: keyPath ?? dir.path("AuthKey_\(Push.keyId).p8"), keyId: Push.keyId, teamId: Push.teamId,
                    topics: [Push.topic], url: stub.base)
                c.push.caFile = pki.ca
                c.push.retryBaseSeconds = 0.01
                c.locateIntervalSeconds = 0
            }
        }

        static func register(_ server: some TestTransport, _ install: UUID, _ body: String, headers: [String: String] = [:]) async throws
            -> HTTPResult
        {
            try await server.send(
                "PUT", "/v1/devices/\(install.wireString)/push-token", body: Array(body.utf8),
                headers: ["Content-Type": "application/json"].merging(headers) { $1 })
        }

        static func apnsToken(_ token: String = deviceToken, env: String = "sandbox") -> String {
            #"{"provider":"apns","token":"\#(token)","environment":"\#(env)","topic":"\#(topic)"}"#
        }

        static func locate(_ server: some TestTransport, _ install: UUID, headers: [String: String] = [:]) async throws -> String {
            let r = try await server.send("POST", "/v1/devices/\(install.wireString)/locate", headers: headers)
            #expect(r.status == 202, "\(r.text)")
            #expect(try r.json()["state"] as? String == "pending", "a new request starts pending: \(r.text)")
            return try #require(try r.json()["id"] as? String)
        }

        static func get(_ server: some TestTransport, _ install: UUID, _ id: String, headers: [String: String] = [:]) async throws
            -> [String: Any]
        {
            try await server.send("GET", "/v1/devices/\(install.wireString)/locate/\(id)", headers: headers).json()
        }

        /// Polls the request until `done` holds (bounded; the push runs after the 202).
        static func wait(
            _ server: some TestTransport, _ install: UUID, _ id: String, headers: [String: String] = [:],
            until done: ([String: Any]) -> Bool
        ) async throws -> [String: Any] {
            let deadline = ContinuousClock.now + .seconds(60)
            var last: [String: Any] = [:]
            while ContinuousClock.now < deadline {
                last = try await get(server, install, id, headers: headers)
                if done(last) { return last }
                try await Task.sleep(for: .milliseconds(10))  // polling the lifecycle, bounded by the deadline
            }
            throw TestFailure("locate request \(id) never got there: \(last)")
        }

        static func metric(_ server: some TestTransport, _ provider: String, _ result: String, headers: [String: String] = [:]) async throws
            -> Int
        {
            let text = try await server.send("GET", "/metrics", headers: headers).text
            let prefix = #"beekon_ingest_pushes_total{provider="\#(provider)",result="\#(result)"} "#
            let alt = #"beekon_ingest_pushes_total{result="\#(result)",provider="\#(provider)"} "#
            for line in text.split(separator: "\n") where line.hasPrefix(prefix) || line.hasPrefix(alt) {
                return Int(Double(line.split(separator: " ").last ?? "") ?? -1)
            }
            return -1
        }

        /// The header and claims of a compact JWS whose signature `verify` accepts; nil otherwise.
        static func jws(_ compact: String, verify: (_ signed: [UInt8], _ signature: [UInt8]) -> Bool) -> (
            header: [String: Any], claims: [String: Any]
        )? {
            let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let sig = Base64URL.decode(parts[2]), verify(Array((parts[0] + "." + parts[1]).utf8), sig),
                let h = Base64URL.decode(parts[0]), let c = Base64URL.decode(parts[1]),
                let header = try? JSONSerialization.jsonObject(with: Data(h)) as? [String: Any],
                let claims = try? JSONSerialization.jsonObject(with: Data(c)) as? [String: Any]
            else { return nil }
            return (header, claims)
        }

        /// What APNs checks, as Apple documents it ("Sending notification requests to APNs",
        /// "Establishing a token-based connection"): HTTP/2, `POST /3/device/<token>`, an ES256
        /// provider token with `kid` and `iss`/`iat` verified against the key's public half,
        /// the background push headers and the payload. Nil when all hold, else what failed.
        static func apnsProblem(_ r: StubRequest, key: P256.Signing.PublicKey, token: String, nowSeconds: Int64) -> String? {
            guard r.majorVersion == 2 else { return "not HTTP/2" }
            guard r.method == "POST", r.path == "/3/device/\(token)" else { return "path \(r.method) \(r.path)" }
            guard let auth = r.header("authorization"), auth.hasPrefix("bearer ") else { return "no bearer" }
            guard
                let jwt = jws(
                    String(auth.dropFirst(7)),
                    verify: { signed, sig in
                        (try? P256.Signing.ECDSASignature(rawRepresentation: sig)).map { key.isValidSignature($0, for: signed) } ?? false
                    })
            else { return "signature does not verify with the key's public half" }
            guard jwt.header["alg"] as? String == "ES256", jwt.header["kid"] as? String == keyId else { return "header \(jwt.header)" }
            guard jwt.claims["iss"] as? String == teamId, let iat = (jwt.claims["iat"] as? NSNumber)?.int64Value,
                abs(iat - nowSeconds) < 3600
            else { return "claims \(jwt.claims)" }
            guard r.header("apns-push-type") == "background", r.header("apns-priority") == "5", r.header("apns-topic") == topic
            else { return "headers \(r.headers)" }
            guard let aps = r.json?["aps"] as? [String: Any], (aps["content-available"] as? NSNumber)?.intValue == 1, aps.count == 1,
                let beekon = r.json?["beekon"] as? [String: Any], beekon["type"] as? String == "locate",
                beekon["locate_request_id"] is String
            else { return "payload \(String(decoding: r.body, as: UTF8.self))" }
            return nil
        }

        /// Issue 50: a device named any APNs topic, and the server signed background pushes for it
        /// (`com.attacker.other-app`: any app of the key's team). Topics are pinned to the bundle
        /// ids the operator configures (`--apns-topic`): a token for another topic is refused at
        /// registration (400, nothing stored); one for a configured topic is pushed to as before.
        @Test func apnsTopicsArePinnedToTheConfiguredApps() async throws {
            let rig = try await Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            try await withRouter(.sqlite, configure: { rig.apns(&$0) }, now: { rig.clock.now() }) { server, _ in
                let install = Fixtures.ids.next()
                for topic in ["com.attacker.other-app", "\(Self.topic).other"] {
                    let body = #"{"provider":"apns","token":"\#(Self.deviceToken)","environment":"sandbox","topic":"\#(topic)"}"#
                    let refused = try await Self.register(server, install, body)
                    #expect(refused.status == 400, "\(topic): \(refused.status) \(refused.text)")
                    #expect(refused.text.contains("topic"), "\(refused.text)")
                }
                #expect(try await Self.register(server, install, Self.apnsToken()).status == 204)
                let id = try await Self.locate(server, install)
                _ = try await Self.wait(server, install, id) { $0["state"] as? String == "pushed" }
                #expect(rig.stub.requests.map { $0.header("apns-topic") } == [Self.topic])
            }
        }

        /// XR-6, BY-2 (issue 30 acceptance): a locate request to a device with an APNs token is sent
        /// over real HTTP/2 + TLS to a local APNs that verifies what Apple documents; the woken
        /// device (a real SDK handed the payload bytes) answers through its own locate path; the
        /// request goes pending → pushed → answered.
        /// The provider token is reused until it is 50 minutes old, then made anew.
        @Test(arguments: Backend.all)
        func apnsWakesTheDeviceEndToEnd(_ backend: Backend) async throws {
            let rig = try await Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            let admin = DeviceIdentity.admin
            try await withServer(
                backend,
                configure: {
                    rig.apns(&$0)
                    DeviceIdentity.required(&$0)
                }, now: { rig.clock.now() }
            ) { server, _ in
                // The device: a real SDK, enrolled, that registers its APNs token with its own credential.
                let device = try await WokenDevice.make(server, databasePath: rig.dir.path("device.sqlite"), now: rig.clock.now())
                let install = try await device.beekon.installID()
                #expect(await device.beekon.setPushToken(Data(repeating: 0xab, count: 32), environment: .sandbox, topic: Self.topic))
                let id = try await Self.locate(server, install, headers: admin)
                let pushed = try await Self.wait(server, install, id, headers: admin) { $0["state"] as? String != "pending" }
                #expect(pushed["state"] as? String == "pushed", "\(pushed)")
                #expect(pushed["pushed_at"] is String && pushed["push_error"] is NSNull)

                let sent = try #require(rig.stub.requests.first)
                let now = Int64(rig.clock.now().timeIntervalSince1970)
                #expect(Self.apnsProblem(sent, key: rig.key.publicKey, token: Self.deviceToken, nowSeconds: now) == nil)
                #expect(
                    String(decoding: sent.body, as: UTF8.self)
                        == #"{"aps":{"content-available":1},"beekon":{"type":"locate","locate_request_id":"\#(id)"}}"#)

                // The woken device: the SDK is handed the payload bytes APNs received and answers
                // through its own locate path (one fresh fix, stored and uploaded at once).
                try await WokenDevice.expectAnswered(server, device, id, push: WireLocatePush(json: Data(sent.body)), pushed: pushed)

                // Reused provider token at 49 min, a new one (later iat) past 50 min.
                rig.clock.advance(by: .seconds(49 * 60))
                let second = try await Self.locate(server, install, headers: admin)
                _ = try await Self.wait(server, install, second, headers: admin) { $0["state"] as? String == "pushed" }
                rig.clock.advance(by: .seconds(2 * 60))
                let third = try await Self.locate(server, install, headers: admin)
                _ = try await Self.wait(server, install, third, headers: admin) { $0["state"] as? String == "pushed" }
                let auths = rig.stub.requests.map { $0.header("authorization") ?? "" }
                #expect(auths.count == 3)
                #expect(auths[0] == auths[1], "the provider token is reused within 50 minutes")
                #expect(auths[2] != auths[1], "and made anew after")
                for r in rig.stub.requests {
                    #expect(Self.apnsProblem(r, key: rig.key.publicKey, token: Self.deviceToken, nowSeconds: now + 51 * 60) == nil)
                }
                #expect(try await Self.metric(server, "apns", "sent", headers: admin) == 3)
            }
        }
    }
}
