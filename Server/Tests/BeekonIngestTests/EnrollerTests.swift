import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 52: the app's own backend holds an enroller key, not the admin key: it creates
    /// one-use codes bound to a person; an admin lists and revokes codes.
    @Suite struct Enroller {
        typealias Identity = DeviceIdentity

        @Test("issue 52: an enroller key creates one-use codes for a person; the admin lists and revokes them", arguments: Backend.all)
        func enrollerCodesListedAndRevoked(_ backend: Backend) async throws {
            try await withRouter(backend, configure: Identity.required) { server, _ in
                let made = try await server.send(
                    "POST", "/v1/enrollments", body: Array(#"{"person":"alice","label":"signup"}"#.utf8),
                    headers: Identity.enroller)
                #expect(made.status == 201, "\(made.text)")
                #expect(made.headers["cache-control"] == "no-store")
                let code = try #require(try made.json()["code"] as? String)
                let id = try #require(try made.json()["id"] as? String)
                #expect(try made.json()["person"] as? String == "alice")
                #expect(try made.json()["uses"] as? Int == 1)
                // What an enroller may not do: a multi-use code, a fleet code, a code for nobody.
                for body in [#"{"person":"alice","uses":2}"#, #"{"person":"alice","per_hour":10}"#] {
                    let r = try await server.send("POST", "/v1/enrollments", body: Array(body.utf8), headers: Identity.enroller)
                    #expect(r.status == 403, "\(body): \(r.text)")
                }
                #expect(try await server.send("POST", "/v1/enrollments", headers: Identity.enroller).status == 400)
                let fleet = try await Identity.newCode(server, #"{"per_hour":100,"label":"app"}"#)
                let unused = try await Identity.newCode(server, #"{"person":"bob"}"#)

                #expect(try await Identity.enroll(server, code: code, install: Fixtures.ids.next()).status == 200)
                #expect(try await Identity.enroll(server, code: fleet, install: Fixtures.ids.next()).status == 200)
                let listed = try await server.send("GET", "/v1/enrollments", headers: Identity.admin)
                #expect(listed.status == 200)
                #expect(!listed.text.contains(code) && !listed.text.contains(fleet) && !listed.text.contains(unused), "a code was listed")
                let rows = try #require(try listed.json()["enrollments"] as? [[String: Any]])
                #expect(rows.count == 3)
                let mine = try #require(rows.first { $0["id"] as? String == id })
                #expect(mine["person"] as? String == "alice")
                #expect(mine["created_by"] as? String == "enroller")
                #expect(mine["enrolled"] as? Int == 1)
                #expect(mine["uses_left"] as? Int == 0)
                #expect(
                    rows.contains { $0["per_hour"] as? Int == 100 && $0["enrolled"] as? Int == 1 && $0["created_by"] as? String == "admin" }
                )
                let limited = try await server.send("GET", "/v1/enrollments?limit=2", headers: Identity.admin)
                #expect((try limited.json()["enrollments"] as? [Any])?.count == 2)
                #expect(try limited.json()["truncated"] as? Bool == true)

                // Revoked: the fleet code enrols nobody more, and revoking twice is a 404.
                let fleetID = try #require(rows.first { $0["per_hour"] as? Int == 100 }?["id"] as? String)
                let revoked = try await server.send("DELETE", "/v1/enrollments/\(fleetID)", headers: Identity.admin)
                #expect(revoked.status == 200, "\(revoked.text)")
                #expect(try revoked.json()["revoked"] as? String == fleetID)
                let refused = try await Identity.enroll(server, code: fleet, install: Fixtures.ids.next())
                #expect(refused.status == 400)
                #expect(try refused.json()["error"] as? String == "invalid_grant")
                #expect(try await server.send("DELETE", "/v1/enrollments/\(fleetID)", headers: Identity.admin).status == 404)
                #expect(try await server.send("DELETE", "/v1/enrollments/nope", headers: Identity.admin).status == 400)
                let after = try #require(
                    try await server.send("GET", "/v1/enrollments", headers: Identity.admin).json()["enrollments"]
                        as? [[String: Any]])
                #expect(after.first { $0["id"] as? String == fleetID }?["revoked_at"] is String)
            }
        }
    }
}
