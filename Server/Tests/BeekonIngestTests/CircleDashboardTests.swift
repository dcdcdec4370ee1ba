@testable import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// The dashboard as the circle's map, for a member's credential (`/?circle=ID#key=TOKEN`), in
    /// a real headless browser: every member with their state and "last seen", the wake-up that
    /// opening the map made going pending → pushed → answered, the answer's fix arriving live; a
    /// paused member shown as paused with no dot; names stay text.
    @Suite(.tags(.browser), .skippable(.browser)) struct CircleDashboard {
        typealias Circles = Ingest.Circles

        @Test func memberSeesTheCircleWakeUpResolve() async throws {
            let rig = try await Push.Rig.make { _ in StubResponse(status: 200) }
            defer { Task { try? await rig.stub.stop() } }
            try await withServer(
                .sqlite,
                configure: {
                    rig.apns(&$0)
                    DeviceIdentity.required(&$0)
                    $0.nudges = nil
                }
            ) { server, _ in
                let alice = try await Circles.member(server, "alice")
                let bob = try await Circles.member(server, "bob")
                let carol = try await Circles.member(server, "carol")
                let id = try await Circles.circle(server, alice, with: [bob, carol])
                let named = try await Circles.send(
                    server, "PUT", "/v1/me", #"{"display_name":"<img src=x onerror=\"document.body.dataset.pwned=1\">Bob"}"#, bob.headers)
                #expect(named.status == 204, "\(named.text)")
                let nowMs = WireTimestamp(Date()).millis
                for m in [bob, carol] {
                    let e = Fixtures.envelope(Fixtures.locations(1, startMillis: nowMs - 120_000), install: m.install)
                    #expect(try await HTTP.upload(server, e, headers: m.headers).status == 200)
                }
                #expect(try await Push.register(server, bob.install, Push.apnsToken(), headers: bob.headers).status == 204)
                let paused = try await Circles.send(
                    server, "PUT", "/v1/circles/\(id)/members/carol/sharing", #"{"paused":true}"#, carol.headers)
                #expect(paused.status == 200, "\(paused.text)")

                let token = try #require(alice.headers["Authorization"]?.dropFirst("Bearer ".count))
                let page = try await HeadlessChromium.launch(server.base + "/?circle=\(id)#key=\(token)")
                try await page.waitUntil("document.querySelectorAll('tr[data-person]').length === 3", timeout: 90)
                let row = { (p: String) in "document.querySelector('tr[data-person=\"\(p)\"]')" }
                // Opening the map woke Bob's phone: his request was pushed.
                try await page.waitUntil("\(row("bob")).querySelector('.locate').dataset.state === 'pushed'", timeout: 90)
                #expect(rig.stub.requests.count == 1)
                #expect(try await page.evaluate("\(row("bob")).querySelector('.state').dataset.state", as: String.self) == "live")
                let seen = try await page.evaluate("\(row("bob")).querySelector('.seen').textContent", as: String.self) ?? ""
                #expect(seen == "last seen 2 min ago" || seen == "last seen 3 min ago", "\(seen)")
                #expect(try await page.evaluate("\(row("carol")).querySelector('.state').dataset.state", as: String.self) == "paused")
                let carolText = try await page.evaluate("\(row("carol")).querySelector('.state').textContent", as: String.self) ?? ""
                #expect(carolText.hasPrefix("paused (paused) since "), "\(carolText)")
                #expect(try await page.evaluate("\(row("carol")).dataset.lastFix === undefined", as: Bool.self) == true)
                #expect(try await page.evaluate("\(row("alice")).querySelector('.sub').textContent", as: String.self) == "owner · you")

                // Bob's phone answers with a fresh fix: the request turns answered and the fix arrives.
                let view = try await Circles.send(server, "GET", "/v1/circles/\(id)", nil, alice.headers).json()
                let bobs = try #require((try Circles.member(view, "bob")["devices"] as? [[String: Any]])?.first)
                let request = try #require((bobs["request"] as? [String: Any])?["id"] as? String)
                var answer = Fixtures.locations(1, startMillis: WireTimestamp(Date()).millis)
                answer[0].locateRequestId = UUID(uuidString: request)
                #expect(try await HTTP.upload(server, Fixtures.envelope(answer, install: bob.install), headers: bob.headers).status == 200)
                try await page.waitUntil("\(row("bob")).querySelector('.locate').dataset.state === 'answered'", timeout: 90)
                try await page.waitUntil("\(row("bob")).dataset.lastFix === '\(answer[0].id.wireString)'", timeout: 90)

                // Names stay text.
                #expect(
                    try await page.evaluate("\(row("bob")).querySelector('.name').textContent", as: String.self)?.hasSuffix("Bob") == true)
                #expect(try await page.evaluate("document.querySelectorAll('#devices img').length", as: Int.self) == 0)
                #expect(try await page.evaluate("document.body.dataset.pwned === undefined", as: Bool.self) == true)
            }
        }
    }
}
