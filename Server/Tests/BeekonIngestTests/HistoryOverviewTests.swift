import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// The history's overview tier (BY-3: long histories simplified server-side; IN-2: a replay
    /// changes nothing; IN-4: the same on SQLite and PostgreSQL; IN-6: share scope and precision).
    @Suite struct HistoryOverview {
        static let admin = ["X-API-Key": "admin-k"]

        /// A wandering track: `count` fixes `stepMillis` apart, heading drifting, a few metres of
        /// jitter, and a 20-minute stop every 2 hours (deterministic for `seed`).
        static func wander(_ count: Int, start: Int64, stepMillis: Int64, seed: UInt64 = 7) -> [WireLocation] {
            var state = seed
            func next() -> Double {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return Double(state >> 11) / Double(1 << 53)
            }
            var lat = 52.52
            var lon = 13.405
            var heading = 0.0
            return (0..<count).map { i in
                let t = start + Int64(i) * stepMillis
                let stopped = (t / 60_000) % 120 < 20
                if !stopped {
                    heading += (next() - 0.5) * 0.3
                    let meters = 1.4 * Double(stepMillis) / 1000
                    lat += cos(heading) * meters / 110_540
                    lon += sin(heading) * meters / (111_320 * cos(lat * .pi / 180))
                }
                let jitter = (next() - 0.5) * 6 / 110_540
                return WireLocation(
                    id: Fixtures.ids.next(), timestamp: WireTimestamp(millis: t), trigger: .interval, motion: .moving,
                    latitude: lat + jitter, longitude: lon + jitter, accuracy: 5)
            }
        }

        static func points(_ fixes: [WireLocation]) -> [TrackPoint] {
            fixes.map { TrackPoint(millis: $0.timestamp.millis, latitude: $0.latitude, longitude: $0.longitude) }
        }

        /// The largest distance (m) from a raw point to the line's segment spanning its time
        /// (`line` is a time-ordered subsequence of `raw`).
        static func maxError(raw: [TrackPoint], line: [TrackPoint]) -> Double {
            guard let first = raw.first, line.count > 1 else { return raw.count <= 1 ? 0 : .infinity }
            let kx = 111_320 * cos(first.latitude * .pi / 180)
            let ky = 110_540.0
            var k = 0
            var worst = 0.0
            for p in raw {
                while k < line.count - 2 && line[k + 1].millis <= p.millis { k += 1 }
                let (a, b) = (line[k], line[k + 1])
                let (ax, ay, bx, by) = (a.longitude * kx, a.latitude * ky, b.longitude * kx, b.latitude * ky)
                let (px, py) = (p.longitude * kx, p.latitude * ky)
                let len2 = (bx - ax) * (bx - ax) + (by - ay) * (by - ay)
                let u = len2 == 0 ? 0 : max(0, min(1, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / len2))
                let (cx, cy) = (ax + u * (bx - ax), ay + u * (by - ay))
                worst = max(worst, ((px - cx) * (px - cx) + (py - cy) * (py - cy)).squareRoot())
            }
            return worst
        }

        /// Issue 50: a fresh SQLite start logged `overview rebuild failed` (`no such table:
        /// track_overview_buckets`): the background services that read the store ran before its
        /// migration. They now wait for it, so a fresh start logs no failure.
        @Test func aFreshStartTouchesNoTableBeforeItsMigration() async throws {
            let capture = LogCapture()
            try await withRouter(.sqlite, logger: capture.logger) { server, _ in
                let health = try await server.send("GET", "/healthz")
                #expect(health.status == 200)
            }
            let failures = capture.lines.filter { ($0.hasPrefix("warning") || $0.hasPrefix("error")) && !$0.contains("AUTH IS OFF") }
            #expect(failures.isEmpty, "\(failures)")
        }

        /// Every level keeps exactly what bounds the error by half a pixel there; the ends are level 0.
        @Test func levelsBoundTheErrorAtEveryLevel() {
            let raw = Self.points(Self.wander(600, start: Fixtures.base, stepMillis: 1_000))
            let levels = TrackOverview.levels(raw)
            #expect(levels.first == 0 && levels.last == 0)
            var previous = 0
            for level in 0...TrackOverview.maxLevel {
                let kept = zip(raw, levels).filter { ($0.1 ?? 99) <= level }.map(\.0)
                let bound = TrackOverview.halfPixelMeters(level: level, latitude: raw[0].latitude)
                #expect(Self.maxError(raw: raw, line: kept) <= bound * 1.0001, "level \(level)")
                #expect(kept.count >= previous)
                previous = kept.count
            }
            #expect(zip(raw, levels).filter { ($0.1 ?? 99) <= 12 }.count < 60)
        }

        /// Issue 32: the bucket a device is still filling is not rebuilt after every upload (at
        /// 1,000 devices that simplification was 9 % of the server's CPU and held SQLite's one
        /// writer): a rebuild takes only buckets that ended `settle` ago; the open one is read raw,
        /// exactly, meanwhile, and is rebuilt once it has settled.
        @Test(arguments: Backend.all)
        func onlySettledBucketsAreRebuilt(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let install = Fixtures.ids.next()
                let bucket = TrackOverview.bucketMillis
                let start = (Fixtures.base / bucket) * bucket
                // Fixes in two buckets: the first has ended, the second is still filling.
                let fixes = Self.wander(120, start: start + bucket - 60_000, stepMillis: 1_000)
                _ = try await store.ingest(
                    IngestBatch(envelope: Fixtures.envelope(fixes, install: install), receivedAt: WireTimestamp(millis: start)))
                let settle = Duration.seconds(60)
                let at = { (millis: Int64) in Date(timeIntervalSince1970: Double(millis) / 1000) }
                // 59 s after the first bucket's end: nothing has settled.
                var bound = OverviewMaintainer.settledBefore(at(start + bucket + 59_000), settle: settle)
                #expect(try await store.history.rebuildOverview(limit: 10, settledBefore: bound) == 0)
                // 60 s after: the first bucket is rebuilt, the second stays raw and reads exactly.
                bound = OverviewMaintainer.settledBefore(at(start + bucket + 60_000), settle: settle)
                #expect(try await store.history.rebuildOverview(limit: 10, settledBefore: bound) == 1)
                #expect(try await store.history.rebuildOverview(limit: 10, settledBefore: bound) == 0)
                let read = try await store.history.overview(installId: install, fromMillis: start, toMillis: start + 2 * bucket) { _ in 12 }
                #expect(read.rawBuckets == 1 && read.rawCount == 120)
                #expect(read.points.suffix(60) == Self.points(Array(fixes.suffix(60)))[...])
                // Once the second bucket has ended and settled it is rebuilt too.
                bound = OverviewMaintainer.settledBefore(at(start + 2 * bucket + 60_000), settle: settle)
                #expect(try await store.history.rebuildOverview(limit: 10, settledBefore: bound) == 1)
                let clean = try await store.history.overview(installId: install, fromMillis: start, toMillis: start + 2 * bucket) { _ in 12
                }
                #expect(clean.rawBuckets == 0 && clean.rawCount == 120)
            }
        }

        /// The tier is kept by ingest + rebuild on both stores: stale buckets read raw (exact), rebuilt
        /// ones from the tier within the bound; a replay marks nothing; a late fix shows at once.
        @Test(arguments: Backend.all)
        func tierIsMaintainedAndReadsStayWithinTheBound(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let install = Fixtures.ids.next()
                let start = (Fixtures.base / 3_600_000) * 3_600_000
                let fixes = Self.wander(14_400, start: start, stepMillis: 2_000)
                let batches = stride(from: 0, to: fixes.count, by: 1_000).map {
                    Fixtures.envelope(Array(fixes[$0..<min(fixes.count, $0 + 1_000)]), install: install)
                }
                for e in batches { _ = try await store.ingest(IngestBatch(envelope: e, receivedAt: WireTimestamp(millis: start))) }
                let raw = Self.points(fixes)
                let end = start + 8 * 3_600_000
                let stale = try await store.history.overview(installId: install, fromMillis: start, toMillis: end) { _ in 12 }
                #expect(stale.points == raw && stale.rawBuckets == 48 && stale.rawCount == raw.count)

                var rebuilt = 0
                while case let n = try await store.history.rebuildOverview(limit: 10), n > 0 { rebuilt += n }
                #expect(rebuilt == 48)
                let clean = try await store.history.overview(installId: install, fromMillis: start, toMillis: end) { _ in 12 }
                #expect(clean.rawBuckets == 0 && clean.rawCount == raw.count && clean.bounds == TrackBounds(raw))
                #expect(clean.points.count < raw.count / 10, "\(clean.points.count) points")
                #expect(Self.maxError(raw: raw, line: clean.points) <= TrackOverview.halfPixelMeters(level: 12, latitude: 52.52))

                // A window cut mid-bucket: its two end buckets come from raw fixes, nothing outside it.
                let (from, to) = (start + 450_000, end - 450_000)
                let cut = try await store.history.overview(installId: install, fromMillis: from, toMillis: to) { _ in 12 }
                let inside = raw.filter { $0.millis >= from && $0.millis < to }
                #expect(cut.rawBuckets == 2 && cut.rawCount == inside.count)
                #expect(cut.points.first == inside.first && cut.points.last == inside.last)
                #expect(Self.maxError(raw: inside, line: cut.points) <= TrackOverview.halfPixelMeters(level: 12, latitude: 52.52))

                // A replayed batch stores nothing and marks nothing.
                let replay = try await store.ingest(IngestBatch(envelope: batches[3], receivedAt: WireTimestamp(millis: start)))
                #expect(replay.duplicateBatch && replay.locationsStored == 0)
                #expect(try await store.history.rebuildOverview(limit: 10) == 0)
                #expect(
                    try await store.history.overview(installId: install, fromMillis: start, toMillis: end) { _ in 12 }.points
                        == clean.points)

                // A late fix 2 km off the track in a clean bucket: read at once (raw part), then from the tier.
                var spike = Self.wander(1, start: start + 5_400_001, stepMillis: 1)[0]
                spike.latitude += 0.02
                _ = try await store.ingest(
                    IngestBatch(envelope: Fixtures.envelope([spike], install: install), receivedAt: WireTimestamp(millis: end)))
                let late = try await store.history.overview(installId: install, fromMillis: start, toMillis: end) { _ in 12 }
                #expect(late.rawBuckets == 1 && late.rawCount == raw.count + 1)
                #expect(late.points.contains { $0.millis == spike.timestamp.millis })
                #expect(try await store.history.rebuildOverview(limit: 10) == 1)
                let after = try await store.history.overview(installId: install, fromMillis: start, toMillis: end) { _ in 12 }
                #expect(after.rawBuckets == 0 && after.points.contains { $0.millis == spike.timestamp.millis })
            }
        }

        static func history(_ server: some TestTransport, _ install: UUID, _ query: String, _ headers: [String: String]) async throws
            -> [String:
            Any]
        {
            let r = try await server.send("GET", "/v1/devices/\(install.wireString)/history?\(query)", headers: headers)
            #expect(r.status == 200, "\(r.text)")
            return try r.json()
        }

        /// The endpoint: a fitted first view from the tier, exact and raw on request, and a share's
        /// window and precision applied to the simplified output exactly as to raw (IN-6).
        /// The server's clock is frozen at the test's `now`, so the share's window starts exactly
        /// where the test counts from, however long a loaded machine takes to get there.
        @Test(arguments: Backend.all)
        func historyEndpointFitsFromTheTierAndKeepsShareScope(_ backend: Backend) async throws {
            let frozen = TestClock().now()
            try await withRouter(
                backend,
                configure: {
                    $0.authMode = .required
                    $0.apiKeys = ["admin-k"]
                },
                now: { frozen }
            ) { server, _ in
                let install = Fixtures.ids.next()
                let now = WireTimestamp(frozen).millis
                let fixes = Self.wander(7_200, start: now - 10 * 3_600_000, stepMillis: 5_000)
                for i in stride(from: 0, to: fixes.count, by: 1_000) {
                    let e = Fixtures.envelope(Array(fixes[i..<min(fixes.count, i + 1_000)]), install: install)
                    #expect(try await HTTP.upload(server, e, headers: Self.admin).status == 200)
                }
                let from = WireTimestamp(millis: now - 11 * 3_600_000).description
                let fitted = try await Self.history(server, install, "from=\(from)&fit=1000x700", Self.admin)
                #expect(fitted["source"] as? String == "overview" && fitted["raw_count"] as? Int == 7_200)
                let box = try #require(TrackBounds(Self.points(fixes)))
                #expect(fitted["zoom"] as? Int == TrackOverview.fitZoom(box, width: 1000, height: 700))
                #expect((fitted["bounds"] as? [Any])?.count == 4)
                let count = try #require(fitted["count"] as? Int)
                #expect(count > 1 && count < 7_200 / 4, "\(count) points")
                let exact = try await Self.history(server, install, "from=\(from)&zoom=14&exact=true", Self.admin)
                #expect(exact["source"] as? String == "exact" && exact["level"] is NSNull)
                let raw = try await Self.history(server, install, "from=\(from)", Self.admin)
                #expect(raw["source"] as? String == "raw" && raw["count"] as? Int == 7_200)
                #expect(
                    try await server.send("GET", "/v1/devices/\(install.wireString)/history?fit=9x9", headers: Self.admin)
                        .status == 400)

                // A share: 8 h of history at 1 km, cut at the window, coarse. Never the tier: it was
                // simplified from precise positions, so a coarsened share simplifies its own
                // coarsened fixes instead (issue 28, XR-4; SharePrecisionTests).
                let created = try await server.send(
                    "POST", "/v1/shares",
                    body: Array(#"{"devices":["\#(install.wireString)"],"precision_m":1000,"history_seconds":28800}"#.utf8),
                    headers: Self.admin)
                let token = try #require(try created.json()["token"] as? String)
                let shared = try await Self.history(server, install, "from=\(from)&zoom=13", ["Authorization": "Bearer \(token)"])
                #expect(shared["source"] as? String == "exact")
                let points = try #require(shared["points"] as? [[Any]])
                let start = Double(now - 8 * 3_600_000 - 1_000)
                #expect(!points.isEmpty && points.allSatisfy { (($0[2] as? NSNumber)?.doubleValue ?? 0) >= start })
                #expect(points.allSatisfy { Shares.decimals($0[0]) <= 1 && Shares.decimals($0[1]) <= 2 })
                #expect((shared["bounds"] as? [Any])?.allSatisfy { Shares.decimals($0) <= 2 } == true)
                let inWindow = fixes.filter { Double($0.timestamp.millis) >= start + 1_000 }.count
                // The server's window starts at its (frozen) now minus 8 h: the test's own count,
                // give or take the fix on the boundary.
                let counted = shared["raw_count"] as? Int ?? 0
                #expect(counted <= inWindow && counted >= inWindow - 1, "\(counted) vs \(inWindow)")
            }
        }
    }
}
