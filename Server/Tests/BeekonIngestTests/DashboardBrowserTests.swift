import BeekonChaos
import BeekonGzip
import BeekonIngest
import BeekonWire
import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#endif

extension Ingest {
    /// The dashboard in a real headless browser (BY-1, BY-3; issue 15).
    @Suite(.tags(.browser), .skippable(.browser)) struct DashboardBrowser {
        static let admin = ["X-API-Key": "admin-k"]

        static func config(_ path: String) -> IngestConfiguration {
            var c = IngestConfiguration(database: .sqlite(path: path), authMode: .required, apiKeys: ["admin-k"])
            c.livePollSeconds = 0.2
            return c
        }

        static func recent(_ install: UUID, minutesAgo: Double, model: String) -> WireEnvelope {
            let start = WireTimestamp(Date()).millis - Int64(minutesAgo * 60_000)
            var e = Fixtures.envelope(Fixtures.locations(3, startMillis: start - 120_000, stepMillis: 60_000), install: install)
            e.device.model = model
            return e
        }

        /// POSTs an envelope body, gzipped like the SDK does.
        static func upload(_ base: String, _ envelope: WireEnvelope, headers: [String: String]) async throws -> HTTPResult {
            try await HTTP.send(
                "POST", base + "/v1/locations", body: Gzip.deflate([UInt8](WireJSONWriter.encode(envelope))),
                headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"].merging(headers) { $1 })
        }

        /// `beekon-ingest` as a real process on `port` (so it can be killed with SIGKILL).
        static func spawn(_ path: String, port: Int, dir: ChaosDir) async throws -> ChildProcess {
            let child = try ChildProcess(
                try ChaosBinaries.ingest(),
                [
                    "--port", "\(port)", "--database", "sqlite:\(path)", "--auth", "required", "--api-key", "admin-k",
                    "--log-level", "error",
                ], dir: dir, name: "ingest")
            let deadline = ContinuousClock.now + .seconds(60)
            while !child.stdout.contains("listening on"), child.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))  // polling the start-up line, bounded by the deadline
            }
            guard child.stdout.contains("listening on") else { throw TestFailure("beekon-ingest did not start: \(child.stderr)") }
            return child
        }

        /// BY-3: every device in the roster with the server's state and an honest "last seen";
        /// a fix ingested after load appears without reload; after a server restart the page
        /// reconnects and shows the fix stored while it was down (Last-Event-ID); a share URL
        /// shows only its devices.
        @Test func rosterLiveUpdatesReconnectAndShareScope() async throws {
            let dir = try ChaosDir()
            let path = dir.path("ingest.sqlite")
            // A port below the ephemeral range, so no client socket can take it while the server is down.
            let port = Int.random(in: 20_000..<30_000)
            var process = try await Self.spawn(path, port: port, dir: dir)
            defer { process.kill() }
            let base = "http://127.0.0.1:\(port)"
            let a = Fixtures.ids.next()
            let b = Fixtures.ids.next()
            for e in [Self.recent(a, minutesAgo: 5, model: "truck-a"), Self.recent(b, minutesAgo: 180, model: "van-b")] {
                #expect(try await Self.upload(base, e, headers: Self.admin).status == 200)
            }
            let created = try await HTTP.send(
                "POST", base + "/v1/shares", body: Array(#"{"devices":["\#(a.wireString)"],"live":true}"#.utf8), headers: Self.admin)
            let shareToken = try #require(try created.json()["token"] as? String)
            let states = try await HTTP.send("GET", base + "/v1/devices", headers: Self.admin).json()
            let expected = Dictionary(
                uniqueKeysWithValues: (states["devices"] as? [[String: Any]] ?? []).map {
                    ($0["install_id"] as! String, $0["status"] as! String)
                })

            let page = try await HeadlessChromium.launch(base + "/#key=admin-k")
            try await page.waitUntil("document.querySelectorAll('tr[data-device]').length === 2", timeout: 90)
            for (id, status) in expected {
                let shown = try await page.evaluate(
                    "document.querySelector('tr[data-device=\"\(id)\"] .state').dataset.state", as: String.self)
                #expect(shown == status, "device \(id)")
            }
            let seenA = try await page.evaluate(
                "document.querySelector('tr[data-device=\"\(a.wireString)\"] .seen').textContent", as: String.self)
            let seenB = try await page.evaluate(
                "document.querySelector('tr[data-device=\"\(b.wireString)\"] .seen').textContent", as: String.self)
            #expect(seenA == "last seen 5 min ago" || seenA == "last seen 6 min ago", "\(seenA ?? "nil")")
            #expect(seenB == "last seen 3 h ago", "\(seenB ?? "nil")")
            try await page.waitUntil("document.getElementById('conn').dataset.state === 'live'", timeout: 90)

            // A fix ingested after the page loaded.
            let fresh = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(Date()).millis), install: a)
            #expect(try await Self.upload(base, fresh, headers: Self.admin).status == 200)
            let rowA = "document.querySelector('tr[data-device=\"\(a.wireString)\"]')"
            let took = try await page.waitUntil("\(rowA).dataset.lastFix === '\(fresh.locations[0].id.wireString)'", timeout: 90)
            print("dashboard: fix visible \(Int(took * 1000)) ms after the upload's 200")
            // "Last seen" now counts from the new fix: at most the seconds since its timestamp
            // (a loaded machine may take more than a second between the upload and this read).
            let seen = try await page.evaluate("\(rowA).querySelector('.seen').textContent", as: String.self) ?? ""
            let since = Int(Date().timeIntervalSince(fresh.locations[0].timestamp.date).rounded(.up))
            let shownSeconds = seen.hasPrefix("last seen ") && seen.hasSuffix(" s ago") ? Int(seen.dropFirst(10).dropLast(6)) : nil
            #expect(shownSeconds.map { $0 >= 0 && $0 <= since } == true, "\(seen) for a fix \(since) s old")

            // Kill the server (SIGKILL), store a fix while it is down, restart it on the same port.
            process.kill()
            _ = try await process.finish(timeout: .seconds(60))
            try await page.waitUntil("document.getElementById('conn').dataset.state === 'reconnecting'", timeout: 90)
            #expect(
                (try await page.evaluate("document.getElementById('conn').textContent", as: String.self))?.hasPrefix("reconnecting…")
                    == true)
            let meanwhile = Fixtures.envelope(Fixtures.locations(1, startMillis: WireTimestamp(Date()).millis + 1_000), install: a)
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            _ = try await store.ingest(IngestBatch(envelope: meanwhile, receivedAt: WireTimestamp(Date())))
            process = try await Self.spawn(path, port: port, dir: dir)
            try await page.waitUntil("\(rowA).dataset.lastFix === '\(meanwhile.locations[0].id.wireString)'", timeout: 90)
            try await page.waitUntil("document.getElementById('conn').dataset.state === 'live'", timeout: 90)
            if let out = ProcessInfo.processInfo.environment["BEEKON_DASHBOARD_SCREENSHOT"] {
                try await page.screenshot().write(to: URL(fileURLWithPath: out))
            }

            // A share URL: only its device.
            let shared = try await HeadlessChromium.launch(base + "/?share=\(shareToken)")
            try await shared.waitUntil("document.querySelectorAll('tr[data-device]').length >= 1", timeout: 90)
            let ids = try await shared.evaluate(
                "[...document.querySelectorAll('tr[data-device]')].map(r => r.dataset.device)", as: [String].self)
            #expect(ids == [a.wireString])
        }

        /// BY-3: a long history draws from the server's simplified, fitted answer; a wheel zoom of
        /// two levels asks for the finer level (debounced) and the track is still drawn.
        @Test func wheelZoomRequestsTheFinerLevelAndStillDrawsTheTrack() async throws {
            let dir = try ChaosDir()
            let port = Int.random(in: 20_000..<30_000)
            let process = try await Self.spawn(dir.path("ingest.sqlite"), port: port, dir: dir)
            defer { process.kill() }
            let base = "http://127.0.0.1:\(port)"
            let install = Fixtures.ids.next()
            // 12 hours of a walk that stops 20 minutes every 2 hours; the start on a 2-hour boundary, so
            // the track has the same shape whatever the time of the run (the stops follow the clock).
            let twoHours: Int64 = 7_200_000
            let start = (WireTimestamp(Date()).millis - 12 * 3_600_000) / twoHours * twoHours
            let fixes = HistoryOverview.wander(8_640, start: start, stepMillis: 5_000)
            for i in stride(from: 0, to: fixes.count, by: 1_000) {
                let e = Fixtures.envelope(Array(fixes[i..<min(fixes.count, i + 1_000)]), install: install)
                #expect(try await Self.upload(base, e, headers: Self.admin).status == 200)
            }
            let page = try await HeadlessChromium.launch(base + "/?days=1#key=admin-k")
            try await page.waitUntil("document.body.dataset.firstRender !== undefined", timeout: 90)
            func number(_ name: String) async throws -> Int {
                Int(try await page.evaluate("document.body.dataset.\(name)", as: String.self) ?? "") ?? -1
            }
            // Pixels of the device's colour (#1f77b4) on the canvas: the track is really drawn.
            let inked = """
                (() => { const c = document.getElementById('map'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 31 && d[i + 1] === 119 && d[i + 2] === 180) n++; return n; })()
                """
            let zoom = try await number("historyZoom")
            let drawn = try await number("drawnPoints")
            #expect(zoom >= 10 && drawn > 1 && drawn < fixes.count, "zoom \(zoom), \(drawn) points")
            // The canvas is painted on the next animation frame, which a loaded machine delays.
            _ = try await page.waitUntil("\(inked) > 200", timeout: 90)
            let loads = try await number("historyLoads")
            _ = try await page.evaluate(
                """
                (() => { const c = document.getElementById('map'), r = c.getBoundingClientRect();
                for (let i = 0; i < 4; i++) c.dispatchEvent(new WheelEvent('wheel', { deltaY: -100, clientX: r.left + r.width / 2,
                clientY: r.top + r.height / 2, bubbles: true, cancelable: true })); return true; })()
                """, as: Bool.self)
            try await page.waitUntil(
                "document.body.dataset.historyZoom === '\(zoom + 2)' && Number(document.body.dataset.historyLoads) > \(loads)", timeout: 90)
            let finer = try await number("drawnPoints")
            #expect(finer > drawn, "\(finer) points at zoom \(zoom + 2) vs \(drawn) at \(zoom)")
            _ = try await page.waitUntil("\(inked) > 200", timeout: 90)
            print("dashboard: zoom \(zoom) → \(zoom + 2): \(drawn) → \(finer) track points")
        }
    }
}
