import BeekonTesting
import Foundation
import Testing

@testable import Beekon

/// XR-6: the host app's push token reaches the server through the sync transport
/// with the device's credential, is sent again after the next sync when a try failed, and a
/// changed token replaces the old one.
@Suite("Push token registration")
struct PushTokenTests {
    @Test func theTokenIsRegisteredResentAfterAFailureAndReplacedWhenItChanges() async throws {
        let h = Harness()
        let transport = ScriptedTransport(fallback: .success(HTTPResponse(status: 204)))
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, BeekonConfig(sync: SyncConfig(url: loopbackURL)))
        let token = Data((0..<32).map { UInt8($0) })
        await transport.enqueue(statuses: 503)
        #expect(await beekon.setPushToken(token, environment: .sandbox, topic: "app.beekon.example") == false)
        _ = try await beekon.sync()
        var puts = await transport.requests.filter { $0.method == "PUT" }
        #expect(puts.count == 2, "the failed registration is sent again after the sync")
        let install = try await beekon.ready().installID(makeID: { UUID() })
        #expect(puts.last?.url.path == "/v1/devices/\(install.uuidString.lowercased())/push-token")
        let body = try #require(try JSONSerialization.jsonObject(with: puts.last?.body ?? Data()) as? [String: String])
        #expect(
            body == [
                "provider": "apns", "token": token.map { String(format: "%02x", $0) }.joined(), "environment": "sandbox",
                "topic": "app.beekon.example",
            ])

        // The same token again is not re-sent; a changed one is.
        #expect(await beekon.setPushToken(token, environment: .sandbox, topic: "app.beekon.example"))
        _ = try await beekon.sync()
        #expect(await transport.requests.filter { $0.method == "PUT" }.count == 2)
        #expect(await beekon.setFCMToken("fcm:registration-token"))
        puts = await transport.requests.filter { $0.method == "PUT" }
        #expect(puts.count == 3)
        #expect(String(decoding: puts.last?.body ?? Data(), as: UTF8.self) == #"{"provider":"fcm","token":"fcm:registration-token"}"#)
    }
}
