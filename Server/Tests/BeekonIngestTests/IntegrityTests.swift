@testable import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 28, item 7: a batch id reused with other content, locate answers from fixes that were never stored, the
    /// locate rate limit under a burst, and the share cache race.
    @Suite struct Integrity {
        @Test(
            "IN-2: a batch_id reused with other fixes is refused (409 batch_conflict); a replay, whole or partial, stays 200",
            arguments: Backend.all)
        func reusedBatchIdIsRefused(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
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
                let fixes = try await server.send("GET", "/v1/devices/\(install.wireString)/fixes").json()["fixes"] as? [Any]
                #expect(fixes?.count == 2)
            }
        }

        @Test("BY-2: a locate request is answered only by a fix the upload stored", arguments: Backend.all)
        func onlyAStoredFixAnswers(_ backend: Backend) async throws {
            let clock = TestClock()
            try await withRouter(backend, now: { clock.now() }) { server, _ in
                let install = Fixtures.ids.next()
                let now = WireTimestamp(clock.now()).millis
                let stored = Fixtures.locations(1, startMillis: now - 60_000)
                #expect(try await HTTP.upload(server, Fixtures.envelope(stored, install: install)).status == 200)
                let created = try await server.send("POST", "/v1/devices/\(install.wireString)/locate")
                let request = try #require(try created.json()["id"] as? String)
                func state() async throws -> String? {
                    try await server.send("GET", "/v1/devices/\(install.wireString)/locate/\(request)").json()["state"]
                        as? String
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

extension Ingest.Integrity {
    @Test("BY-2: the locate rate limit holds under a concurrent burst (3 of 12 accepted, never more)", arguments: Backend.all)
    func locateRateLimitIsAtomic(_ backend: Backend) async throws {
        try await withRouter(
            backend,
            configure: {
                $0.locateBurst = 3
                $0.locateIntervalSeconds = 3_600
            }
        ) { server, _ in
            let install = Fixtures.ids.next()
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await server.send("POST", "/v1/devices/\(install.wireString)/locate").status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 202 }.count == 3, "\(statuses)")
            #expect(statuses.filter { $0 == 429 }.count == 9, "\(statuses)")
        }
    }
}

extension Ingest.Integrity {
    @Test("BY-7: a share created just after the share cache was refreshed is active at once (its stream is not closed)")
    func shareCreatedAfterACacheRefreshIsActive() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-share-cache-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let store = try SQLiteLocationStore(path: path, logger: testLogger)
        try await store.migrate()
        let shares = ShareService(store: store)
        let (first, _) = try await shares.create(
            ShareSpec(devices: nil, all: true, expiresInSeconds: nil, label: nil, scope: ShareScope(live: true)))
        #expect(await shares.isActive(first.id))  // the cache is loaded now, without the next share
        let (second, _) = try await shares.create(
            ShareSpec(devices: nil, all: true, expiresInSeconds: nil, label: nil, scope: ShareScope(live: true)))
        #expect(await shares.isActive(second.id))
        #expect(try await shares.revoke(id: second.id))
        #expect(await !shares.isActive(second.id))
        #expect(await !shares.isActive("sh_never"))
    }
}
