import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 28, item 7: a batch id reused with other content, and locate answers from fixes that were never stored.
    @Suite struct BatchConflict {
        @Test("IN-2: a batch_id reused with other fixes is refused (409 batch_conflict); a replay, whole or partial, stays 200", arguments: Backend.all)
        func reusedBatchIdIsRefused(_ backend: Backend) async throws {
            try await withServer(backend) { server, _ in
                let install = Fixtures.ids.next()
                let first = Fixtures.envelope(Fixtures.locations(2), install: install)
                #expect(try await HTTP.upload(server, first).status == 200)
                let replay = try await HTTP.upload(server, first)
                #expect(replay.status == 200)
                #expect(try replay.json()["duplicate_batch"] as? Bool == true)
                var partial = first
                partial.locations = [first.locations[1]]
                #expect(try await HTTP.upload(server, partial).status == 200, "a device that lost a row resends the rest")

                var other = Fixtures.envelope(Fixtures.locations(3, startMillis: Fixtures.base + 3_600_000), install: install)
                other.batchId = first.batchId
                let refused = try await HTTP.upload(server, other)
                #expect(refused.status == 409)
                #expect(try refused.json()["error"] as? String == "batch_conflict")
                // Another install reusing the id with the same fix ids is refused too.
                var stranger = first
                stranger.device.installId = Fixtures.ids.next()
                #expect(try await HTTP.upload(server, stranger).status == 409)
                let fixes = try await HTTP.send("GET", server.base + "/v1/devices/\(install.wireString)/fixes").json()["fixes"] as? [Any]
                #expect(fixes?.count == 2)
            }
        }

        @Test("BY-2: a locate request is answered only by a fix the upload stored", arguments: Backend.all)
        func onlyAStoredFixAnswers(_ backend: Backend) async throws {
            try await withServer(backend) { server, _ in
                let install = Fixtures.ids.next()
                let now = WireTimestamp(Date()).millis
                let stored = Fixtures.locations(1, startMillis: now - 60_000)
                #expect(try await HTTP.upload(server, Fixtures.envelope(stored, install: install)).status == 200)
                let created = try await HTTP.send("POST", server.base + "/v1/devices/\(install.wireString)/locate")
                let request = try #require(try created.json()["id"] as? String)
                func state() async throws -> String? {
                    try await HTTP.send("GET", server.base + "/v1/devices/\(install.wireString)/locate/\(request)").json()["state"] as? String
                }
                // A fix reusing a stored fix's id, elsewhere: a duplicate, not stored, not an answer.
                var forged = Fixtures.locations(1, startMillis: now)
                forged[0].id = stored[0].id
                forged[0].locateRequestId = UUID(uuidString: request)
                let upload = try await HTTP.upload(server, Fixtures.envelope(forged, install: install))
                #expect(upload.status == 200)
                #expect(try upload.json()["locations_duplicate"] as? Int == 1)
                #expect(try await state() != "answered")
                // A fresh fix answers.
                var answer = Fixtures.locations(1, startMillis: now)
                answer[0].locateRequestId = UUID(uuidString: request)
                #expect(try await HTTP.upload(server, Fixtures.envelope(answer, install: install)).status == 200)
                #expect(try await state() == "answered")
            }
        }
    }
}
