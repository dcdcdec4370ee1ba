import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import BeekonIngest

extension Ingest {
    /// Issue 28, finding 3 (XR-4): nothing a coarsened share can request reveals more than its
    /// precision or its window. The property, for random tracks from a seeded generator: two
    /// devices whose tracks are *twins* — the same after coarsening inside the window, anything
    /// at all before it — look exactly alike through two shares of the same precision and
    /// window, on every endpoint a share can read (devices and latest fix, sessions, session
    /// track, fixes, history with any `zoom`/`fit`/`exact`, proximity events, the live stream).
    /// Any figure computed from a precise value (a tolerance, a speed, a bearing, a distance,
    /// a count or time outside the window) makes the twins differ.
    @Suite struct SharePrecision {
        static let admin = ["X-API-Key": "admin-k"]
        /// 2026-06-20T00:00:00Z, the server's frozen clock.
        static let nowMillis: Int64 = 1_781_913_600_000
        static let windowSeconds = 3_600

        /// A random track and its twin for one device pair.
        struct Twins {
            var a: [WireEnvelope] = []
            var b: [WireEnvelope] = []
            var inWindowFixes = 0
        }

        /// A value moved to somewhere else in the same coarsening cell of width `step` around `centre`.
        static func jitter(_ centre: Double, step: Double, _ rng: inout SeededRandom) -> Double {
            centre + Double.random(in: -0.45...0.45, using: &rng) * step
        }

        static func makeTwins(seed: UInt64, precision: Double, a installA: UUID, b installB: UUID) -> Twins {
            var rng = SeededRandom(seed: seed)
            let c = Coarsening(meters: precision)
            let latDecimals = Coarsening.decimals(meters: precision, metersPerDegree: Coarsening.metersPerDegree)
            var lat = Double.random(in: -60...60, using: &rng)
            var lon = Double.random(in: -170...170, using: &rng)
            let windowStart = nowMillis - Int64(windowSeconds) * 1000
            var twins = Twins()
            let sessionA = Fixtures.ids.next()
            let sessionB = Fixtures.ids.next()
            // Before the window: unrelated tracks of different lengths, partly in the sessions that continue into it.
            for (install, session) in [(installA, sessionA), (installB, sessionB)] {
                let count = Int.random(in: 1...12, using: &rng)
                let start = windowStart - Int64.random(in: 2...48, using: &rng) * 3_600_000
                let before = (0..<count).map { i in
                    WireLocation(
                        id: Fixtures.ids.next(),
                        timestamp: WireTimestamp(millis: start + Int64(i) * Int64.random(in: 1_000...60_000, using: &rng)),
                        trigger: .interval, motion: .moving, latitude: Double.random(in: -80...80, using: &rng),
                        longitude: Double.random(in: -180...180, using: &rng), accuracy: Double.random(in: 1...50, using: &rng),
                        speed: Double.random(in: 0...30, using: &rng), bearing: Double.random(in: 0..<360, using: &rng))
                }
                let envelope = Fixtures.envelope(
                    before, session: Bool.random(using: &rng) ? session : Fixtures.ids.next(), install: install)
                if install == installA { twins.a.append(envelope) } else { twins.b.append(envelope) }
            }
            // In the window: a random walk and its twin, fix by fix in the same cell.
            let count = Int.random(in: 5...60, using: &rng)
            var t = windowStart + Int64.random(in: 60_000...600_000, using: &rng)
            var fixesA: [WireLocation] = []
            var fixesB: [WireLocation] = []
            var proximityA: [WireProximityEvent] = []
            var proximityB: [WireProximityEvent] = []
            let beacon = Fixtures.ids.next()
            for i in 0..<count {
                lat = min(80, max(-80, lat + rng.gaussian(sigma: precision * 0.4) / 111_320))
                lon += rng.gaussian(sigma: precision * 0.4) / (111_320 * max(0.2, cos(lat * .pi / 180)))
                lon = lon > 180 ? lon - 360 : lon < -180 ? lon + 360 : lon
                let (latC, lonC) = c.coordinate(latitude: lat, longitude: lon)
                let lonDecimals = Coarsening.decimals(
                    meters: precision, metersPerDegree: Coarsening.metersPerDegree * cos(latC * .pi / 180))
                var twinLat = jitter(latC, step: pow(10, -Double(latDecimals)), &rng)
                var twinLon = jitter(lonC, step: pow(10, -Double(lonDecimals)), &rng)
                if c.coordinate(latitude: twinLat, longitude: twinLon) != (latC, lonC) || abs(twinLon) > 180 || abs(twinLat) > 90 {
                    (twinLat, twinLon) = (lat, lon)
                }
                let altitude = Double.random(in: -50...3000, using: &rng)
                func fix(_ la: Double, _ lo: Double) -> WireLocation {
                    WireLocation(
                        id: Fixtures.ids.next(), timestamp: WireTimestamp(millis: t), trigger: .interval, motion: .moving,
                        latitude: la, longitude: lo, accuracy: Double.random(in: 1..<precision, using: &rng),
                        speed: Double.random(in: 0...40, using: &rng), bearing: Double.random(in: 0..<360, using: &rng),
                        // Within the server's sanity bounds (issue 50), in the same cell as its twin's.
                        altitude: max(FixSanity.altitude.lowerBound, jitter(c.multiple(altitude), step: precision, &rng)))
                }
                fixesA.append(fix(lat, lon))
                fixesB.append(fix(twinLat, twinLon))
                if i % 7 == 3 {
                    let distance = Double.random(in: 0...200, using: &rng)
                    for twin in [0, 1] {
                        let event = WireProximityEvent(
                            id: Fixtures.ids.next(), region: "door", uuid: beacon, major: 1, minor: 2, scanner: "s", type: .enter,
                            timestamp: WireTimestamp(millis: t), distance: max(0, jitter(c.multiple(distance), step: precision, &rng)))
                        if twin == 0 { proximityA.append(event) } else { proximityB.append(event) }
                    }
                }
                t += Int64.random(in: 1_000...60_000, using: &rng)
            }
            var envelopeA = Fixtures.envelope(fixesA, session: sessionA, install: installA)
            envelopeA.proximityEvents = proximityA
            var envelopeB = Fixtures.envelope(fixesB, session: sessionB, install: installB)
            envelopeB.proximityEvents = proximityB
            twins.a.append(envelopeA)
            twins.b.append(envelopeB)
            twins.inWindowFixes = count
            return twins
        }

        /// A JSON answer without the identifiers that necessarily differ between two devices.
        static func normalised(_ text: String) throws -> String {
            let ids: Set<String> = ["id", "install_id", "session_id", "batch_id"]
            func strip(_ value: Any) -> Any {
                if let o = value as? [String: Any] {
                    return o.filter { !ids.contains($0.key) }.mapValues(strip)
                }
                if let a = value as? [Any] { return a.map(strip) }
                return value
            }
            let object = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            let data = try JSONSerialization.data(withJSONObject: strip(object), options: [.sortedKeys, .fragmentsAllowed])
            return String(decoding: data, as: UTF8.self)
        }

        /// Issue 50: a 1,000 m share still read the names a device sends: a geofence id
        /// (`office-bldg-7-floor-3`), a beacon's region, uuid, major and minor, the scanner's name
        /// ("Anna's iPhone") and a privacy zone's id. Each names a place or a person and tells more
        /// than any precision, so a share with a precision sees none of them, on every endpoint and
        /// on the stream (SECURITY.md, "What a coarse share sees"); a full-precision share and the
        /// admin see them all.
        @Test(arguments: Backend.all)
        func coarseSharesReadNoNames(_ backend: Backend) async throws {
            let clock = TestClock(start: Date(timeIntervalSince1970: Double(Self.nowMillis) / 1000))
            try await Shares.withAdminServer(backend, clock) { server, _ in
                let a = Fixtures.ids.next()
                let beacon = Fixtures.ids.next()
                let t = Self.nowMillis - 600_000
                var fixes = Fixtures.locations(2, startMillis: t)
                fixes[1].privacyZone = "home-of-anna"
                let fence = WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "office-bldg-7-floor-3", type: .enter, timestamp: WireTimestamp(millis: t + 1_000))
                var envelope = Fixtures.envelope(fixes, install: a, events: [fence])
                envelope.proximityEvents = [
                    WireProximityEvent(
                        id: Fixtures.ids.next(), region: "meeting-room-4", uuid: beacon, major: 4_242, minor: 1_717,
                        scanner: "Anna's iPhone", type: .enter, timestamp: WireTimestamp(millis: t + 2_000), distance: 1.5)
                ]
                #expect(try await HTTP.upload(server, envelope, headers: Self.admin).status == 200)
                let names = ["office-bldg-7-floor-3", "meeting-room-4", beacon.wireString, "Anna's iPhone", "home-of-anna"]
                func token(_ precision: String) async throws -> String {
                    let r = try await HTTP.send(
                        "POST", server.base + "/v1/shares",
                        body: Array(#"{"devices":["\#(a.wireString)"],"live":true\#(precision)}"#.utf8), headers: Self.admin)
                    #expect(r.status == 201, "\(r.text)")
                    return try #require(try r.json()["token"] as? String)
                }
                let coarse = ["Authorization": "Bearer \(try await token(#","precision_m":1000"#))"]
                let full = ["Authorization": "Bearer \(try await token(""))"]
                let paths = [
                    "/v1/devices", "/v1/devices/\(a.wireString)/fixes", "/v1/devices/\(a.wireString)/proximity-events",
                    "/v1/sessions/\(envelope.sessionId.wireString)/track",
                ]
                for (who, headers, seesNames) in [("coarse", coarse, false), ("full", full, true), ("admin", Self.admin, true)] {
                    var seen = ""
                    for path in paths {
                        let r = try await HTTP.send("GET", server.base + path, headers: headers)
                        #expect(r.status == 200, "\(who) \(path): \(r.text)")
                        seen += r.text
                    }
                    let stream = try await Live.fixes(server.base + "/v1/live", headers: headers, after: "0", count: 2)
                    #expect(stream.contains { $0.event == "geofence_event" }, "\(who): \(stream)")
                    seen += stream.map(\.data).joined()
                    let proximity = try await HTTP.send(
                        "GET", server.base + "/v1/devices/\(a.wireString)/proximity-events", headers: headers
                    ).json()
                    let event = try #require((proximity["proximity_events"] as? [[String: Any]])?.first)
                    for name in names {
                        #expect(seen.contains(name) == seesNames, "\(who) \(seesNames ? "misses" : "reads") \(name)")
                    }
                    #expect((event["major"] as? Int == 4_242) == seesNames, "\(who): \(event)")
                    #expect((event["minor"] as? Int == 1_717) == seesNames, "\(who): \(event)")
                }
            }
        }

        @Test(
            "XR-4: twin tracks are indistinguishable through coarsened, windowed shares on every endpoint", arguments: Backend.all,
            [1, 2, 3] as [UInt64])
        func coarsenedSharesCannotTellTwinsApart(_ backend: Backend, seed: UInt64) async throws {
            var rng = SeededRandom(seed: seed ^ 0x5EED)
            let precision = [25.0, 300, 1000, 5000][Int.random(in: 0...3, using: &rng)]
            try await withServer(
                backend,
                configure: {
                    $0.authMode = .required
                    $0.apiKeys = ["admin-k"]
                }, now: { Date(timeIntervalSince1970: Double(Self.nowMillis) / 1000) }
            ) { server, _ in
                let a = Fixtures.ids.next()
                let b = Fixtures.ids.next()
                let twins = Self.makeTwins(seed: seed, precision: precision, a: a, b: b)
                for e in twins.a + twins.b { #expect(try await HTTP.upload(server, e, headers: Self.admin).status == 200) }
                var tokens: [String] = []
                for install in [a, b] {
                    let r = try await HTTP.send(
                        "POST", server.base + "/v1/shares",
                        body: Array(
                            #"{"devices":["\#(install.wireString)"],"live":true,"precision_m":\#(precision),"history_seconds":\#(Self.windowSeconds)}"#
                                .utf8), headers: Self.admin)
                    #expect(r.status == 201, "\(r.text)")
                    tokens.append(try #require(try r.json()["token"] as? String))
                }
                func read(_ path: (UUID) -> String, _ i: Int) async throws -> String {
                    let r = try await HTTP.send("GET", server.base + path([a, b][i]), headers: ["Authorization": "Bearer \(tokens[i])"])
                    #expect(r.status == 200, "\(path([a, b][i])): \(r.text)")
                    return try Self.normalised(r.text)
                }
                let sessionOf: (UUID) -> String = { install in (install == a ? twins.a : twins.b).last!.sessionId.wireString }
                var paths: [(String, (UUID) -> String)] = [
                    ("devices", { _ in "/v1/devices" }),
                    ("sessions", { "/v1/devices/\($0.wireString)/sessions" }),
                    ("track", { "/v1/sessions/\(sessionOf($0))/track" }),
                    ("fixes", { "/v1/devices/\($0.wireString)/fixes" }),
                    ("proximity", { "/v1/devices/\($0.wireString)/proximity-events" }),
                    ("history", { "/v1/devices/\($0.wireString)/history" }),
                ]
                let week = WireTimestamp(millis: Self.nowMillis - 7 * 86_400_000).description
                for query in ["zoom=3", "zoom=12", "zoom=18", "fit=800x600", "fit=320x200&exact=true", "from=\(week)&fit=1024x768"] {
                    paths.append(("history?\(query)", { "/v1/devices/\($0.wireString)/history?\(query)" }))
                }
                for (name, path) in paths {
                    let seenA = try await read(path, 0)
                    let seenB = try await read(path, 1)
                    #expect(seenA == seenB, "seed \(seed), \(precision) m, \(name):\nA \(seenA.prefix(600))\nB \(seenB.prefix(600))")
                    #expect(!seenA.contains("\"speed\"") && !seenA.contains("\"bearing\""), "\(name) withholds speed and bearing")
                }
                // The stream: the same events in the same order.
                var streamed: [[String]] = []
                for token in tokens {
                    let messages = try await Live.fixes(server.base + "/v1/live?share=\(token)", after: "0", count: twins.inWindowFixes)
                    streamed.append(try messages.filter { $0.event == "fix" }.map { try Self.normalised($0.data) })
                }
                #expect(streamed[0].count == twins.inWindowFixes)
                #expect(streamed[0] == streamed[1], "seed \(seed), \(precision) m: the live stream differs")
            }
        }
    }
}
