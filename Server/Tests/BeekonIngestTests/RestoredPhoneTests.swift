import Beekon
import BeekonIngest
import BeekonPrimitives
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 52's target: a phone restored from a backup (same install id and database, an
    /// empty Keychain) re-enrols through the host's callback and keeps its history. A real SDK
    /// against a real server in process, over loopback HTTP.
    @Suite struct RestoredPhone {
        typealias Identity = DeviceIdentity

        /// A code for `person` from the app's backend (its enroller key).
        static func codeFromBackend(_ server: TestServer, person: String) async throws -> String {
            let r = try await HTTP.send(
                "POST", server.base + "/v1/enrollments", body: Array(#"{"person":"\#(person)"}"#.utf8), headers: Identity.enroller)
            #expect(r.status == 201, "\(r.text)")
            return try #require(try r.json()["code"] as? String)
        }

        /// One located fix stored and uploaded by `beekon` (an admin's locate request answered).
        static func locateOnce(_ server: TestServer, _ beekon: Beekon, _ provider: ScriptedProvider, _ clock: TestClock) async throws {
            let install = try await beekon.installID()
            let id = try #require(UUID(uuidString: try await Identity.locate(server, install)))
            await provider.setOneShotFix(RawFix(timestamp: clock.now(), latitude: 45.81, longitude: 15.98, accuracy: 5))
            guard case .answered = await beekon.handleLocateRequest(id: id) else {
                Issue.record("the locate request was not answered")
                return
            }
        }

        static func fixCount(_ server: TestServer, _ install: UUID) async throws -> Int {
            let r = try await HTTP.send("GET", server.base + "/v1/devices/\(install.wireString)/fixes", headers: Identity.admin)
            return (try r.json()["fixes"] as? [Any])?.count ?? -1
        }

        @Test("issue 52: a restored phone (same install id, no tokens) re-enrols through the host's callback and keeps its history")
        func restoredPhoneReenrolsAndKeepsItsHistory() async throws {
            try await withServer(.sqlite, configure: Identity.required) { server, _ in
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-restored-\(UUID().uuidString).sqlite").path
                defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
                let tokenURL = try #require(URL(string: server.base + "/oauth/token"))
                let ingestURL = try #require(URL(string: server.base + "/v1/locations"))
                let clock = TestClock(start: Date())

                // The phone as first set up: enrolled with a code for alice, one fix uploaded.
                let provider = ScriptedProvider()
                let phone = Beekon(
                    dependencies: BeekonDependencies(
                        databasePath: path, provider: provider, clock: clock, transport: URLSessionTransport(),
                        secretStore: InMemorySecretStore()))
                let auth = try await phone.enroll(code: try await Self.codeFromBackend(server, person: "alice"), tokenURL: tokenURL)
                try await phone.configure(BeekonConfig(sync: SyncConfig(url: ingestURL, auth: auth)))
                try await Self.locateOnce(server, phone, provider, clock)
                let install = try await phone.installID()
                #expect(try await Self.fixCount(server, install) == 1)
                await phone.shutdown()

                // Restored from a backup: the database came back, the Keychain's tokens did not.
                let restoredProvider = ScriptedProvider()
                let restored = Beekon(
                    dependencies: BeekonDependencies(
                        databasePath: path, provider: restoredProvider, clock: clock, transport: URLSessionTransport(),
                        secretStore: InMemorySecretStore()))
                let asked = Locked(0)
                await restored.setReenrollmentHandler {
                    asked.withLock { $0 += 1 }
                    return try? await Self.codeFromBackend(server, person: "alice")
                }
                try await restored.configure(BeekonConfig(sync: SyncConfig(url: ingestURL, auth: AuthConfig.refreshing(at: tokenURL))))
                // The locate guard's interval between answers (30 s) survives the relaunch (issue 51).
                clock.advance(by: .seconds(60))
                try await Self.locateOnce(server, restored, restoredProvider, clock)

                #expect(try await restored.installID() == install, "the install kept its id")
                #expect(asked.value == 1, "the host was asked for one code")
                #expect(try await restored.pendingUploadCount() == 0, "the new fix was uploaded")
                #expect(try await Self.fixCount(server, install) == 2, "one device's history: before and after the restore")
                // The credentials of before the restore are retired.
                let old = try await HTTP.send(
                    "POST", tokenURL.absoluteString,
                    body: Array("grant_type=refresh_token&refresh_token=\(try #require(auth.refreshToken))".utf8),
                    headers: ["Content-Type": "application/x-www-form-urlencoded"])
                #expect(try old.json()["error"] as? String == "invalid_grant")
                await restored.shutdown()
            }
        }

        @Test("issue 52: an install another person holds is not re-enrolled; resetInstallID starts over as a new install")
        func resetInstallIDStartsOver() async throws {
            try await withServer(.sqlite, configure: Identity.required) { server, _ in
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-reset-\(UUID().uuidString).sqlite").path
                defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
                let tokenURL = try #require(URL(string: server.base + "/oauth/token"))
                let phone = Beekon(
                    dependencies: BeekonDependencies(
                        databasePath: path, provider: ScriptedProvider(), transport: URLSessionTransport(),
                        secretStore: InMemorySecretStore()))
                _ = try await phone.enroll(code: try await Self.codeFromBackend(server, person: "alice"), tokenURL: tokenURL)
                let old = try await phone.installID()
                // Bob signs in on alice's old phone: his code cannot take her install.
                do {
                    _ = try await phone.enroll(code: try await Self.codeFromBackend(server, person: "bob"), tokenURL: tokenURL)
                    Issue.record("another person's code re-enrolled the install")
                } catch let error as BeekonError {
                    guard case .enrollmentFailed = error else { throw error }
                }
                let fresh = try await phone.resetInstallID()
                #expect(fresh != old)
                #expect(try await phone.installID() == fresh)
                _ = try await phone.enroll(code: try await Self.codeFromBackend(server, person: "bob"), tokenURL: tokenURL)
                await phone.shutdown()
            }
        }
    }
}
