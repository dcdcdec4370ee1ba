import Beekon
import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// The SDK's circle client (`Beekon.circles`) against the real server in process, over
    /// loopback HTTP: real SDK instances, each enrolled with a code for its person and syncing with
    /// that device credential, create, invite, join, read, set their sharing, open the live view
    /// (which wakes the others; one answers through its own SDK) and are refused once removed —
    /// every answer read by BeekonWire's circle messages, the code the server writes them with.
    @Suite struct CirclesThroughTheSDK {
        typealias Identity = DeviceIdentity

        /// One phone: a real SDK enrolled for `person`.
        struct Phone: Sendable {
            let beekon: Beekon
            let provider: ScriptedProvider
            let clock: TestClock
            let path: String
            /// The credential it enrolled with.
            let auth: AuthConfig
            var circles: CircleClient { beekon.circles }

            static func make(_ server: TestServer, _ person: String, clock: TestClock) async throws -> Phone {
                let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "beekon-circle-\(person)-\(UUID().uuidString).sqlite"
                ).path
                let provider = ScriptedProvider()
                let beekon = Beekon(
                    dependencies: BeekonDependencies(
                        databasePath: path, provider: provider, clock: clock, transport: URLSessionTransport(),
                        secretStore: InMemorySecretStore()))
                let code = try await Identity.newCode(server, #"{"person":"\#(person)"}"#)
                let auth = try await beekon.enroll(code: code, tokenURL: try #require(URL(string: server.base + "/oauth/token")))
                try await beekon.configure(
                    BeekonConfig(sync: SyncConfig(url: try #require(URL(string: server.base + "/v1/locations")), auth: auth)))
                return Phone(beekon: beekon, provider: provider, clock: clock, path: path, auth: auth)
            }

            func close() async {
                await beekon.shutdown()
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }

        /// A live view's updates as they arrive, awaited by predicate.
        actor LiveLog {
            private(set) var updates: [CircleLiveUpdate] = []
            private var waiters: [Int: (from: Int, match: @Sendable (CircleLiveUpdate) -> Bool, c: CheckedContinuation<Int?, Never>)] = [:]
            private var keys = 0
            private var reader: Task<Void, Never>?

            /// Starts reading `stream`.
            static func reading(_ stream: AsyncStream<CircleLiveUpdate>) async -> LiveLog {
                let log = LiveLog()
                await log.read(stream)
                return log
            }

            private func read(_ stream: AsyncStream<CircleLiveUpdate>) {
                reader = Task { for await u in stream { self.append(u) } }
            }

            private func append(_ u: CircleLiveUpdate) {
                updates.append(u)
                for (key, w) in waiters where updates.count - 1 >= w.from && w.match(u) {
                    waiters[key] = nil
                    w.c.resume(returning: updates.count - 1)
                }
            }

            /// The index of the first update at or after `from` that matches (waiting for it at most
            /// `timeout`, which bounds a failure only); nil when none came.
            func first(from: Int = 0, timeout: Duration = .seconds(60), where match: @escaping @Sendable (CircleLiveUpdate) -> Bool) async
                -> Int?
            {
                if let i = updates.indices.first(where: { $0 >= from && match(updates[$0]) }) { return i }
                keys += 1
                let key = keys
                return await withCheckedContinuation { c in
                    waiters[key] = (from, match, c)
                    Task {
                        try? await Task.sleep(for: timeout)  // bounds a failure only
                        self.expire(key)
                    }
                }
            }

            private func expire(_ key: Int) { waiters.removeValue(forKey: key)?.c.resume(returning: nil) }

            func update(_ i: Int) -> CircleLiveUpdate { updates[i] }

            func stop() { reader?.cancel() }
        }

        /// `status code` of the refusal `body` threw; nil when it succeeded, the error in words otherwise.
        static func refusal<T>(_ body: () async throws -> T) async -> String? {
            do {
                _ = try await body()
                return nil
            } catch {
                guard case .serverRefused(let status, let code, _)? = error as? BeekonError else { return "\(error)" }
                return "\(status) \(code)"
            }
        }

        static func isCircle(_ u: CircleLiveUpdate) -> Bool {
            if case .event(.circle) = u { return true }
            return false
        }

        static func circle(_ u: CircleLiveUpdate) -> WireCircleView? {
            if case .event(.circle(let v)) = u { return v }
            return nil
        }

        /// A server (SQLite, auth required) on a test clock, and a phone each for alice and bob on the same clock.
        static func withAliceAndBob(_ body: @Sendable (TestServer, TestClock, Phone, Phone) async throws -> Void) async throws {
            let clock = Self.clock()
            try await withServer(.sqlite, configure: Identity.required, now: { clock.now() }) { server, _ in
                let alice = try await Phone.make(server, "alice", clock: clock)
                let bob = try await Phone.make(server, "bob", clock: clock)
                do {
                    try await body(server, clock, alice, bob)
                } catch {
                    await alice.close()
                    await bob.close()
                    throw error
                }
                await alice.close()
                await bob.close()
            }
        }

        /// The test's clock: an hour after the fixtures' base time.
        static func clock() -> TestClock { TestClock(start: Date(timeIntervalSince1970: Double(Fixtures.base) / 1000 + 3600)) }

        @Test("issue 52: two SDKs create, invite, join, read and set their sharing through the circle client")
        func createInviteJoinReadShare() async throws {
            try await Self.withAliceAndBob { server, clock, alice, bob in

                #expect(try await alice.circles.me() == WirePerson(person: "alice", displayName: nil))
                let created = try await alice.circles.create(name: "family")
                #expect(created.name == "family" && created.role == .owner)
                #expect(created.members.map(\.person) == ["alice"] && created.you?.role == .owner)

                let invitation = try await alice.circles.invite(to: created.id, expiresIn: .seconds(3600))
                #expect(invitation.circleId == created.id && invitation.code.hasPrefix("bci1."))
                #expect(invitation.expiresAt == WireTimestamp(clock.now().addingTimeInterval(3600)))
                #expect(try await bob.circles.join(code: invitation.code) == WireCircleJoin(circleId: created.id, joined: true))
                // Used once: the same code is refused as the SDK's typed error.
                await #expect(
                    throws: BeekonError.serverRefused(
                        status: 400, code: "invalid_invitation", message: "the invitation is unknown, expired or used")
                ) {
                    try await bob.circles.join(code: invitation.code)
                }

                #expect(try await bob.circles.list().circles.map(\.id) == [created.id])
                let seen = try await bob.circles.circle(created.id)
                #expect(seen.role == .member && seen.members.map(\.person) == ["alice", "bob"] && seen.you?.person == "bob")
                // Only the owner invites.
                #expect(await Self.refusal { try await bob.circles.invite(to: created.id) } == "403 forbidden")

                let stored = try await bob.circles.setSharing(
                    WireCircleSharing(precisionMeters: 1000, hours: "00:00-23:59", timeZone: "UTC"), in: created.id)
                #expect(stored == WireCircleSharing(precisionMeters: 1000, hours: "00:00-23:59", timeZone: "UTC"))
                let paused = try await bob.circles.setSharing(WireCircleSharing(paused: true), in: created.id)
                #expect(paused.paused && paused.pausedAt == WireTimestamp(clock.now()))
                let bobSeen = try #require(try await alice.circles.circle(created.id).members.first { $0.person == "bob" })
                #expect(bobSeen.state == .paused && bobSeen.pausedReason == "paused" && bobSeen.devices.isEmpty)
                #expect(bobSeen.pausedSince == WireTimestamp(clock.now()))

                try await bob.circles.leave(created.id)
                #expect(try await alice.circles.circle(created.id).members.map(\.person) == ["alice"])
                #expect(try await bob.circles.list().circles.isEmpty)
            }
        }

        @Test("issue 52: the live view wakes the others, an SDK's answer arrives as a typed fix, and a removed member's view ends refused")
        func liveViewWakesAndRemovalRefuses() async throws {
            try await Self.withAliceAndBob { server, clock, alice, bob in
                let bobInstall = try await bob.beekon.installID()
                let id = try await alice.circles.create(name: "family").id
                _ = try await bob.circles.join(code: try await alice.circles.invite(to: id).code)
                _ = try await bob.circles.setSharing(WireCircleSharing(precisionMeters: 1000), in: id)

                // Alice opens the map: the first event is the circle, with Bob's device asked for a fix.
                let alicesView = await LiveLog.reading(alice.circles.live(id))
                let first = try #require(await alicesView.first(where: Self.isCircle))
                let opened = try #require(Self.circle(await alicesView.update(first)))
                let bobsDevice = try #require(opened.members.first { $0.person == "bob" }?.devices.first)
                #expect(bobsDevice.installId == bobInstall && bobsDevice.wake == .requested)
                let request = try #require(bobsDevice.request, "the wake-up's request is in the view")
                #expect(request.requestedBy == "circle:" + id)

                // Bob's SDK, woken, answers with one fresh fix (as a silent push hands it the id).
                await bob.provider.setOneShotFix(
                    RawFix(timestamp: clock.now(), latitude: 52.520_008_1, longitude: 13.404_954_3, accuracy: 5))
                guard case .answered = await bob.beekon.handleLocateRequest(id: request.id) else {
                    Issue.record("Bob's SDK did not answer the wake-up")
                    return
                }
                let fixAt = try #require(
                    await alicesView.first(from: first) {
                        if case .event(.live(.fix(let f))) = $0 { return f.installId == bobInstall }
                        return false
                    }, "Bob's answer reached Alice's view")
                guard case .event(.live(.fix(let fix))) = await alicesView.update(fixAt) else { return }
                #expect(fix.location.locateRequestId == request.id)
                #expect(
                    fix.location.latitude != 52.520_008_1 && fix.location.accuracy == 1000, "at Bob's 1000 m, not exact: \(fix.location)")

                // Bob watches too; Alice removes him: his view is refused as the SDK's typed error.
                let bobsView = await LiveLog.reading(bob.circles.live(id))
                #expect(await bobsView.first(where: Self.isCircle) != nil)
                try await alice.circles.remove("bob", from: id)
                let end = try #require(
                    await bobsView.first {
                        if case .ended = $0 { return true }
                        return false
                    }, "Bob's view ended")
                guard case .ended(let error) = await bobsView.update(end) else { return }
                #expect(await Self.refusal { () throws in throw error } == "404 not_found")
                #expect(await Self.refusal { try await bob.circles.circle(id) } == "404 not_found")
                // Alice's view reconnected under the new rules: a new circle event without Bob.
                let again = try #require(
                    await alicesView.first(from: fixAt + 1) { Self.circle($0)?.members.map(\.person) == ["alice"] },
                    "Alice's view reopened without Bob")
                #expect(again > fixAt)
                await alicesView.stop()
                await bobsView.stop()
            }
        }

        @Test("issue 52: every circle answer of the server is BeekonWire's message, byte for byte")
        func serverAnswersAreTheWireMessages() async throws {
            try await Self.withAliceAndBob { server, clock, alice, bob in
                let headers = { (p: Phone) in Identity.bearer(p.auth.accessToken ?? "") }
                func exact<M: Equatable>(_ r: HTTPResult, _ read: (Data) throws -> M, _ write: (M) -> Data) throws {
                    #expect((200..<300).contains(r.status), "\(r.text)")
                    #expect(String(decoding: write(try read(Data(r.body))), as: UTF8.self) == r.text)
                }
                let base = server.base
                try exact(try await HTTP.send("GET", base + "/v1/me", headers: headers(alice)), WirePerson.decode) { $0.encoded() }
                let created = try await HTTP.send(
                    "POST", base + "/v1/circles", body: Array(WireCircleCreate(name: "family \"home\"").encoded()),
                    headers: headers(alice).merging(["Content-Type": "application/json"]) { $1 })
                try exact(created, WireCircleView.decode) { $0.encoded() }
                let id = try WireCircleView.decode(Data(created.body)).id
                let invited = try await HTTP.send("POST", base + "/v1/circles/\(id)/invitations", headers: headers(alice))
                try exact(invited, WireCircleInvitation.decode) { $0.encoded() }
                let joined = try await HTTP.send(
                    "POST", base + "/v1/circles/join",
                    body: Array(WireCircleJoinRequest(code: try WireCircleInvitation.decode(Data(invited.body)).code).encoded()),
                    headers: headers(bob).merging(["Content-Type": "application/json"]) { $1 })
                try exact(joined, WireCircleJoin.decode) { $0.encoded() }
                let shared = try await HTTP.send(
                    "PUT", base + "/v1/circles/\(id)/members/bob/sharing",
                    body: Array(WireCircleSharing(precisionMeters: 250, hours: "06:00-22:00", timeZone: "UTC").encoded()),
                    headers: headers(bob).merging(["Content-Type": "application/json"]) { $1 })
                try exact(shared, WireCircleSharing.decode) { $0.encoded() }
                try exact(try await HTTP.send("GET", base + "/v1/circles", headers: headers(bob)), WireCircleList.decode) { $0.encoded() }
                // The woken view: Bob's device with its request, then with his answering fix, coarsened.
                let woken = try await HTTP.send("POST", base + "/v1/circles/\(id)/wake", headers: headers(alice))
                try exact(woken, WireCircleView.decode) { $0.encoded() }
                let request = try #require(try WireCircleView.decode(Data(woken.body)).members.last?.devices.first?.request)
                await bob.provider.setOneShotFix(
                    RawFix(timestamp: clock.now(), latitude: 52.520_008_1, longitude: 13.404_954_3, accuracy: 5))
                guard case .answered = await bob.beekon.handleLocateRequest(id: request.id) else {
                    Issue.record("Bob's SDK did not answer")
                    return
                }
                let seen = try await HTTP.send("GET", base + "/v1/circles/\(id)", headers: headers(alice))
                try exact(seen, WireCircleView.decode) { $0.encoded() }
                let device = try #require(try WireCircleView.decode(Data(seen.body)).members.last?.devices.first)
                #expect(device.fix != nil && device.request?.state == .answered && device.lastFixAt != nil, "\(seen.text)")
            }
        }

        @Test("issue 52: an access token the server no longer accepts is refreshed by the SDK's own refresher, once")
        func expiredAccessTokenIsRefreshed() async throws {
            let serverClock = Self.clock()
            try await withServer(.sqlite, configure: Identity.required, now: { serverClock.now() }) { server, _ in
                // The phone's clock stays behind: its refresher does not see the token expire, the server does.
                let alice = try await Phone.make(server, "alice", clock: Self.clock())
                defer { Task { await alice.close() } }
                _ = try await alice.circles.create(name: "family")
                serverClock.advance(by: .seconds(7200))
                // The token the phone holds is refused now…
                let stale = try await HTTP.send(
                    "GET", server.base + "/v1/circles", headers: Identity.bearer(try #require(alice.auth.accessToken)))
                #expect(stale.status == 401, "\(stale.text)")
                // …and the client's call is answered: its 401 made the SDK's refresher rotate the tokens.
                #expect(try await alice.circles.list().circles.count == 1)
                var rotations = alice.beekon.authChanges.makeAsyncIterator()
                let rotated = try #require(await rotations.next())
                #expect(rotated.accessToken != alice.auth.accessToken)
            }
        }

        @Test("issue 52: without sync and a credential the circle client says what to configure")
        func unconfiguredClientIsAConfigurationError() async throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-circle-none-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ScriptedProvider(), clock: Self.clock()))
            let unconfigured = await Self.refusal { try await beekon.circles.list() }
            #expect(unconfigured?.hasPrefix("invalid configuration: circles need sync") == true, "\(unconfigured ?? "listed")")
            await #expect(throws: BeekonError.self) { try await beekon.circles.circle("not-a-circle") }
            await beekon.shutdown()
        }
    }
}
