import Beekon
import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest.Push {
    /// The device a silent push wakes in the end-to-end tests (issue 30 acceptance: "the woken
    /// device answers"): a real in-process SDK with its own SQLite store, enrolled with the test
    /// server (auth required) and syncing to it over loopback HTTP with that device credential,
    /// its clock injected (it starts at the server's clock and is never
    /// advanced, so the push budget cannot run out on a loaded box) and a scripted source whose
    /// one-shot fix is the answer. It registers its push token itself and is handed the payload
    /// the local APNs/FCM received, as the host app would forward it.
    struct WokenDevice: Sendable {
        let beekon: Beekon
        let provider: ScriptedProvider
        let clock: TestClock
        /// The device's credential from its enrollment.
        let auth: AuthConfig

        /// An SDK enrolled with `server` (an admin-made code, for `person` when given: issue 52's
        /// circles) and syncing to it with the device credential; its database lives at `databasePath`.
        static func make(_ server: TestServer, databasePath: String, now: Date, person: String? = nil) async throws -> WokenDevice {
            let clock = TestClock(start: now)
            let provider = ScriptedProvider()
            let beekon = Beekon(
                dependencies: BeekonDependencies(
                    databasePath: databasePath, provider: provider, clock: clock, transport: URLSessionTransport()))
            let tokenURL = try #require(URL(string: server.base + "/oauth/token"))
            let code = try await Ingest.DeviceIdentity.newCode(server, person.map { #"{"person":"\#($0)"}"# } ?? "")
            let auth = try await beekon.enroll(code: code, tokenURL: tokenURL)
            try await beekon.configure(BeekonConfig(sync: SyncConfig(url: URL(string: server.base + "/v1/locations")!, auth: auth)))
            return WokenDevice(beekon: beekon, provider: provider, clock: clock, auth: auth)
        }

        /// A fresh access token of this device (its refresh token exchanged at the server, whose
        /// clock may have passed the enrolled token's expiry), as bearer headers.
        func credential(_ server: TestServer) async throws -> [String: String] {
            let refresh = try #require(auth.refreshToken)
            let r = try await HTTP.send(
                "POST", server.base + "/oauth/token", body: Array("grant_type=refresh_token&refresh_token=\(refresh)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(r.status == 200, "\(r.text)")
            return Ingest.DeviceIdentity.bearer(try #require(try r.json()["access_token"] as? String))
        }

        /// Hands `push` to the SDK with a fresh fix ready at the source, as a woken app does:
        /// returns the result for the completion handler and the fix the SDK stored for the
        /// request (nil if none).
        func answer(_ push: WireLocatePush?, latitude: Double = 45.81, longitude: Double = 15.98) async throws -> (
            result: RemoteNotificationResult, stored: Location?
        ) {
            await provider.setOneShotFix(RawFix(timestamp: clock.now(), latitude: latitude, longitude: longitude, accuracy: 5))
            let result = await beekon.handleRemoteNotification(push)
            let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
            let stored = rows.first { $0.locateRequestId != nil && $0.locateRequestId == push?.locateRequestID }
            return (result, stored)
        }

        /// The woken device's end-to-end answer: the SDK answered with `.newData`, stored one
        /// manual fix for the request and uploaded it (nothing pending); the server shows the
        /// request `answered` by that fix, with the time it was pushed kept.
        static func expectAnswered(
            _ server: TestServer, _ device: WokenDevice, _ id: String, push: WireLocatePush?, pushed: [String: Any]
        ) async throws {
            let install = try await device.beekon.installID()
            let (result, stored) = try await device.answer(push)
            #expect(result == .newData)
            let fix = try #require(stored, "the SDK stored a fix for the request")
            #expect(fix.trigger == .manual && fix.locateRequestId?.wireString == id)
            #expect(try await device.beekon.pendingUploadCount() == 0, "the answer was uploaded at once")
            let answered = try await Ingest.Push.wait(server, install, id, headers: Ingest.DeviceIdentity.admin) {
                $0["state"] as? String != "pushed"
            }
            #expect(answered["state"] as? String == "answered", "\(answered)")
            #expect(answered["fix_id"] as? String == fix.id.wireString, "answered by the fix the SDK stored and uploaded")
            #expect(answered["pushed_at"] as? String == pushed["pushed_at"] as? String)
        }
    }
}
