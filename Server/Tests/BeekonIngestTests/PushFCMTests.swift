import BeekonChaos
@testable import BeekonIngest
import BeekonPrimitives
import BeekonWire
import Foundation
import Testing
import _CryptoExtras

extension Ingest.Push {
    /// XR-6, BY-2 (issue 30 acceptance, FCM): a locate request to a device with an FCM token goes
    /// over HTTP/2 + TLS to a local token endpoint (an RS256 service-account assertion, verified
    /// against the key's public half, exchanged for an access token that is cached until five
    /// minutes before it expires) and a local `messages:send` (a high-priority data message with
    /// string values only); the woken device (a real SDK handed the data map) answers through
    /// its own locate path: pending → pushed → answered. FCM's
    /// `UNREGISTERED` removes the token.
    @Test func fcmWakesTheDeviceEndToEnd() async throws {
        let unregister = Locked(false)
        let rig = try await Rig.make { r in
            if r.path == "/token" {
                return StubResponse(status: 200, body: #"{"access_token":"ya29.local","expires_in":3600,"token_type":"Bearer"}"#)
            }
            if unregister.value {
                return StubResponse(
                    status: 404,
                    body:
                        #"{"error":{"code":404,"status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
                )
            }
            return StubResponse(status: 200, body: #"{"name":"projects/beekon-test/messages/1"}"#)
        }
        defer { Task { try? await rig.stub.stop() } }
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let email = "beekon@beekon-test.iam.gserviceaccount.com"
        let account: [String: String] = [
            "type": "service_account", "project_id": "beekon-test", "private_key_id": "kid-1", "private_key": rsa.pkcs8PEMRepresentation,
            "client_email": email, "token_uri": rig.stub.base + "/token",
        ]
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: rig.dir.path("sa.json")))
        let configure: (inout IngestConfiguration) -> Void = {
            $0.push.fcm = FCMConfiguration(serviceAccountPath: rig.dir.path("sa.json"), endpoint: rig.stub.base)
            $0.push.caFile = rig.pki.ca
            $0.locateIntervalSeconds = 0
            Ingest.DeviceIdentity.required(&$0)
        }
        let admin = Ingest.DeviceIdentity.admin
        try await withServer(.sqlite, configure: configure, now: { rig.clock.now() }) { server, _ in
            // The device: a real SDK, enrolled, that registers its FCM token with its own credential.
            let device = try await WokenDevice.make(server, databasePath: rig.dir.path("device.sqlite"), now: rig.clock.now())
            let install = try await device.beekon.installID()
            let registration = "fcm-registration:token_0123456789"
            #expect(await device.beekon.setFCMToken(registration))
            let id = try await Self.locate(server, install, headers: admin)
            let pushed = try await Self.wait(server, install, id, headers: admin) { $0["state"] as? String != "pending" }
            #expect(pushed["state"] as? String == "pushed", "\(pushed)")

            let requests = rig.stub.requests
            #expect(requests.count == 2 && requests.allSatisfy { $0.majorVersion == 2 && $0.method == "POST" })
            let tokenRequest = try #require(requests.first)
            #expect(tokenRequest.path == "/token")
            let form = String(decoding: tokenRequest.body, as: UTF8.self)
            #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="))
            let assertion = String(form.split(separator: "=").last ?? "")
            let jwt = try #require(
                Self.jws(assertion) { signed, sig in
                    rsa.publicKey.isValidSignature(
                        _RSA.Signing.RSASignature(rawRepresentation: sig), for: signed, padding: .insecurePKCS1v1_5)
                }, "the assertion verifies with the service account's public key")
            #expect(jwt.header["alg"] as? String == "RS256" && jwt.header["kid"] as? String == "kid-1")
            #expect(jwt.claims["iss"] as? String == email && jwt.claims["aud"] as? String == rig.stub.base + "/token")
            #expect(jwt.claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
            let iat = try #require((jwt.claims["iat"] as? NSNumber)?.int64Value)
            #expect((jwt.claims["exp"] as? NSNumber)?.int64Value == iat + 3600)
            #expect(abs(iat - Int64(rig.clock.now().timeIntervalSince1970)) < 60)

            let send = requests[1]
            #expect(send.path == "/v1/projects/beekon-test/messages:send")
            #expect(send.header("authorization") == "Bearer ya29.local")
            let message = try #require(send.json?["message"] as? [String: Any])
            #expect(message["token"] as? String == registration)
            #expect((message["android"] as? [String: Any])?["priority"] as? String == "high")
            let data = try #require(message["data"] as? [String: String], "data values are strings only")
            #expect(data == ["beekon_type": "locate", "beekon_locate_request_id": id])

            // The woken device: the SDK is handed the data map FCM delivered (as the host's
            // messaging service passes it on) and answers through its own locate path.
            try await WokenDevice.expectAnswered(server, device, id, push: WireLocatePush(userInfo: data), pushed: pushed)

            // The access token is reused 54 minutes on, and fetched anew within 5 minutes of its expiry.
            rig.clock.advance(by: .seconds(54 * 60))
            let second = try await Self.locate(server, install, headers: admin)
            _ = try await Self.wait(server, install, second, headers: admin) { $0["state"] as? String == "pushed" }
            #expect(rig.stub.requests.filter { $0.path == "/token" }.count == 1)
            rig.clock.advance(by: .seconds(2 * 60))
            let third = try await Self.locate(server, install, headers: admin)
            _ = try await Self.wait(server, install, third, headers: admin) { $0["state"] as? String == "pushed" }
            #expect(rig.stub.requests.filter { $0.path == "/token" }.count == 2)

            // UNREGISTERED: the token goes, and the next request is not pushed.
            unregister.value = true
            let fourth = try await Self.locate(server, install, headers: admin)
            let failed = try await Self.wait(server, install, fourth, headers: admin) { !($0["push_error"] is NSNull) }
            #expect((failed["push_error"] as? String)?.contains("fcm 404 UNREGISTERED") == true, "\(failed)")
            let count = rig.stub.requests.count
            let fifth = try await Self.locate(server, install, headers: admin)
            let commands = try await server.send(
                "GET", "/v1/devices/\(install.wireString)/commands?wait=0", headers: try await device.credential(server))
            #expect(commands.status == 200, "the device reads its own commands: \(commands.text)")
            #expect(try await Self.get(server, install, fifth, headers: admin)["state"] as? String == "delivered")
            #expect(rig.stub.requests.count == count)
            #expect(try await Self.metric(server, "fcm", "sent", headers: admin) == 3)
            #expect(try await Self.metric(server, "fcm", "token_removed", headers: admin) == 1)
        }
    }
}
