import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 52: enrollment codes an app can ship. A fleet code (`per_hour`) extracted from the
    /// app cannot lock real installs out by enrolling junk, nor claim an install the server
    /// already knows; an install re-enrols with a fresh code for the same person.
    @Suite struct EnrollmentAttacks {
        typealias Identity = DeviceIdentity

        static func refresh(_ server: some TestTransport, _ token: String) async throws -> HTTPResult {
            try await server.send(
                "POST", "/oauth/token", body: Array("grant_type=refresh_token&refresh_token=\(token)".utf8),
                headers: ["Content-Type": "application/x-www-form-urlencoded"])
        }

        @Test(
            "issue 52: 20 junk installs on a fleet code hold real installs off for an hour at most, never for good", arguments: Backend.all)
        func fleetCodeExhaustionIsNotALockout(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withRouter(backend, configure: Identity.required, now: { clock.now() }) { server, _ in
                let fleet = try await Identity.newCode(server, #"{"per_hour":20,"ttl_seconds":2592000,"label":"app"}"#)
                // The attacker, holding the code extracted from the app, enrols 20 junk installs.
                for i in 0..<20 {
                    let junk = try await Identity.enroll(server, code: fleet, install: Fixtures.ids.next())
                    #expect(junk.status == 200, "junk install \(i): \(junk.text)")
                }
                // A real new install meanwhile: told to come back, not that its code is dead.
                let real = Fixtures.ids.next()
                let held = try await Identity.enroll(server, code: fleet, install: real)
                #expect(held.status == 429, "\(held.text)")
                #expect(try held.json()["error"] as? String != "invalid_grant")
                let retry = try #require(held.headers["retry-after"].flatMap { Int($0) })
                #expect((1...3600).contains(retry))
                // Within the hour it enrols, with the same code.
                clock.advance(by: .seconds(retry))
                let later = try await Identity.enroll(server, code: fleet, install: real)
                #expect(later.status == 200, "a real install was locked out for good: \(later.text)")
            }
        }

        @Test(
            "issue 52: a code bound to no person cannot claim an install the server already knows (its id is in every share)",
            arguments: Backend.all)
        func fleetCodeCannotPreemptAKnownInstall(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Identity.required) { server, db in
                // A device with history but no credential (it uploaded with a key, or before auth was on).
                let known = Fixtures.ids.next()
                #expect(
                    try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: known), headers: Identity.admin)
                        .status == 200)
                // A device held by a credential, and one an admin revoked.
                let held = Fixtures.ids.next()
                _ = try await Identity.seed(db, subject: "held-phone", install: held)
                for body in [#"{"per_hour":5}"#, #"{"uses":5}"#, ""] {
                    let code = try await Identity.newCode(server, body)
                    for install in [known, held] {
                        let claim = try await Identity.enroll(server, code: code, install: install)
                        #expect(claim.status == 400, "\(body) claimed \(install): \(claim.text)")
                        #expect(try claim.json()["error"] as? String == "invalid_grant")
                    }
                }
                // The known install is not forged: its history has the one admin upload only.
                let fixes = try await server.send("GET", "/v1/devices/\(known.wireString)/fixes", headers: Identity.admin)
                #expect((try fixes.json()["fixes"] as? [Any])?.count == 1)
                // A code bound to a person (the app's backend vouches for it) may enrol the known install.
                let personal = try await Identity.newCode(server, #"{"person":"alice"}"#)
                #expect(try await Identity.enroll(server, code: personal, install: known).status == 200)
            }
        }

        @Test(
            "issue 52: a known install re-enrols with a fresh code for the same person; its old credentials are retired",
            arguments: Backend.all)
        func reenrolmentForTheSamePerson(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Identity.required) { server, _ in
                let phone = Fixtures.ids.next()
                let first = try await Identity.enroll(
                    server, code: try await Identity.newCode(server, #"{"person":"alice"}"#), install: phone)
                #expect(first.status == 200, "\(first.text)")
                let oldRefresh = try #require(try first.json()["refresh_token"] as? String)
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: phone),
                        headers: Identity.bearer(try #require(try first.json()["access_token"] as? String))
                    ).status == 200)

                // Another person's code, a fleet code and a code without person cannot take the install.
                for body in [#"{"person":"mallory"}"#, #"{"per_hour":5}"#, #"{"uses":1}"#] {
                    let taken = try await Identity.enroll(server, code: try await Identity.newCode(server, body), install: phone)
                    #expect(taken.status == 400, "\(body): \(taken.text)")
                }
                // The restored phone: same install id, no tokens; a fresh code for alice.
                let again = try await Identity.enroll(
                    server, code: try await Identity.newCode(server, #"{"person":"alice"}"#), install: phone)
                #expect(again.status == 200, "\(again.text)")
                let access = try #require(try again.json()["access_token"] as? String)
                #expect(
                    try await HTTP.upload(
                        server, Fixtures.envelope(Fixtures.locations(1), install: phone), headers: Identity.bearer(access)
                    )
                    .status == 200)
                // The old chain is retired; the new one refreshes.
                #expect(try await Self.refresh(server, oldRefresh).json()["error"] as? String == "invalid_grant")
                let newRefresh = try #require(try again.json()["refresh_token"] as? String)
                #expect(try await Self.refresh(server, newRefresh).status == 200)
                // Its history is one device's: both uploads under the same install.
                let fixes = try await server.send("GET", "/v1/devices/\(phone.wireString)/fixes", headers: Identity.admin)
                #expect((try fixes.json()["fixes"] as? [Any])?.count == 2)
                // A revoked install stays revoked, even for its person.
                #expect(
                    try await server.send("POST", "/v1/devices/\(phone.wireString)/revoke", headers: Identity.admin).status
                        == 200)
                let revoked = try await Identity.enroll(
                    server, code: try await Identity.newCode(server, #"{"person":"alice"}"#), install: phone)
                #expect(revoked.status == 400)
            }
        }
    }
}
