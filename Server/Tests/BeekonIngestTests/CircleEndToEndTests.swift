import Beekon
import BeekonIngest
import BeekonSources
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest.Push {
    /// Issue 52's first target: "open the map, wake the circle" with real SDK instances as
    /// members, in process, through the local APNs stand-in.
    @Suite(.tags(.slow), .skippable(.slow)) struct CircleEndToEnd {
        typealias Circles = Ingest.Circles

        /// The pushes the local APNs received so far, by device token; waits (bounded) until
        /// there are `count`.
        static func pushes(_ rig: Rig, count: Int) async throws -> [String: [StubRequest]] {
            let deadline = ContinuousClock.now + .seconds(60)
            while rig.stub.requests.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))  // polling the stand-in, bounded by the deadline
            }
            return Dictionary(grouping: rig.stub.requests) { String($0.path.split(separator: "/").last ?? "") }
        }

        @Test(
            "issue 52: A opens the circle's map; B and C, asleep, get one push each, answer, and A's stream shows both; B paused shows paused",
            arguments: Backend.all)
        func openTheMapWakeTheCircle(_ backend: Backend) async throws {
            let rig = try await Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            try await withServer(
                backend,
                configure: {
                    rig.apns(&$0)
                    Ingest.DeviceIdentity.required(&$0)
                }, now: { rig.clock.now() }
            ) { server, _ in
                let alice = try await Circles.member(server, "alice")
                let b = try await WokenDevice.make(server, databasePath: rig.dir.path("b.sqlite"), now: rig.clock.now(), person: "bob")
                let c = try await WokenDevice.make(server, databasePath: rig.dir.path("c.sqlite"), now: rig.clock.now(), person: "carol")
                let tokens = ["bob": String(repeating: "bb", count: 32), "carol": String(repeating: "cc", count: 32)]
                #expect(await b.beekon.setPushToken(Data(repeating: 0xbb, count: 32), environment: .sandbox, topic: Ingest.Push.topic))
                #expect(await c.beekon.setPushToken(Data(repeating: 0xcc, count: 32), environment: .sandbox, topic: Ingest.Push.topic))
                let id = try await Circles.circle(server, alice)
                for device in [b, c] {
                    let code = try await Circles.invite(server, id, alice.headers)
                    let joined = try await HTTP.send(
                        "POST", server.base + "/v1/circles/join", body: Array(#"{"code":"\#(code)"}"#.utf8),
                        headers: try await device.credential(server).merging(["Content-Type": "application/json"]) { $1 })
                    #expect(joined.status == 200, "\(joined.text)")
                }
                let installs = ["bob": try await b.beekon.installID(), "carol": try await c.beekon.installID()]
                #expect(rig.stub.requests.isEmpty, "nobody was woken before the map was opened")

                // A opens the map: the stream opens with the circle, B and C each asked once.
                let url = server.base + "/v1/circles/\(id)/live"
                let opening = Circles.Opening()
                async let alicesStream = Circles.stream(url, headers: alice.headers, opened: opening.yield) { m in
                    let fixes = m.filter { $0.event == "fix" }.map(Live.object)
                    return installs.values.allSatisfy { install in fixes.contains { $0["install_id"] as? String == install.wireString } }
                }
                await opening.wait()
                let pushed = try await Self.pushes(rig, count: 2)
                #expect(pushed.keys.sorted() == tokens.values.sorted(), "one push to each of B and C: \(pushed.keys)")
                #expect(pushed.values.allSatisfy { $0.count == 1 })
                // Each asleep device is handed the payload its APNs token received and answers.
                for (person, device) in [("bob", b), ("carol", c)] {
                    let request = try #require(pushed[tokens[person]!]?.first)
                    let (result, stored) = try await device.answer(WireLocatePush(json: Data(request.body)))
                    #expect(result == .newData, "\(person)")
                    #expect(stored != nil, "\(person) stored a fresh fix for the request")
                }
                let (messages, _) = try await alicesStream
                let circle = Live.object(try #require(messages.first))
                #expect(messages.first?.event == "circle")
                let others = (circle["members"] as? [[String: Any]] ?? []).filter { $0["you"] as? Bool == false }
                let wakes = others.flatMap { ($0["devices"] as? [[String: Any]]) ?? [] }.compactMap { $0["wake"] as? String }
                #expect(wakes == ["requested", "requested"], "\(circle)")
                #expect(messages.contains { $0.event == "locate" && $0.data.contains("\"answered\"") }, "the request states reach the map")

                // Opening the map again at once asks nobody twice (the requests were answered; the
                // per-device budget holds): still two pushes.
                let again = try await HTTP.send("POST", server.base + "/v1/circles/\(id)/wake", headers: alice.headers)
                #expect(again.status == 202)
                #expect(rig.stub.requests.count == 2)

                // B pauses sharing: A sees "paused", not a position, on the view and on the stream.
                let paused = try await HTTP.send(
                    "PUT", server.base + "/v1/circles/\(id)/members/bob/sharing", body: Array(#"{"paused":true}"#.utf8),
                    headers: try await b.credential(server).merging(["Content-Type": "application/json"]) { $1 })
                #expect(paused.status == 200, "\(paused.text)")
                let view = try await HTTP.send("GET", server.base + "/v1/circles/\(id)", headers: alice.headers)
                let bob = try Circles.member(try view.json(), "bob")
                #expect(bob["state"] as? String == "paused" && bob["paused_reason"] as? String == "paused", "\(bob)")
                #expect((bob["devices"] as? [Any])?.isEmpty == true && bob["last_seen_at"] is NSNull)
                #expect(!view.text.contains(installs["bob"]!.wireString), "B's device was shown: \(view.text)")
                let reopened = try await Circles.stream(url, headers: alice.headers) { !$0.isEmpty }
                let first = Live.object(try #require(reopened.messages.first))
                #expect(try Circles.member(first, "bob")["state"] as? String == "paused")
                #expect(!(reopened.messages.first?.data.contains(installs["bob"]!.wireString) ?? true))
            }
        }
    }
}
