import BeekonPrimitives
import BeekonWire
@testable import Beekon
import Foundation
import Testing
import BeekonTesting

@Suite("Geofence engine (GF-1..3)")
struct GeofenceEngineTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    let centre = (lat: 48.0, lon: 11.0)

    func fence(_ id: String, radius: Double = 100, entry: Bool = true, exit: Bool = true) -> Geofence {
        Geofence(
            id: id, latitude: centre.lat, longitude: centre.lon, radiusMeters: radius,
            notifyOnEntry: entry, notifyOnExit: exit)
    }

    /// Evaluates a fix `meters` east of the centre at `t0 + seconds`.
    func step(
        _ engine: inout GeofenceEngine, _ seconds: Double, east meters: Double, accuracy: Double? = 5,
        ids: GeofenceTestIDs = GeofenceTestIDs()
    ) -> [GeofenceTransition] {
        let p = destination(centre.lat, centre.lon, bearingDegrees: 90, meters: meters)
        return engine.evaluate(
            latitude: p.lat, longitude: p.lon, accuracy: accuracy,
            timestamp: t0.addingTimeInterval(seconds), makeID: ids.next
        ).map(\.transition)
    }

    @Test func enterAndExitSequence() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("home")])
        #expect(step(&engine, 0, east: 500) == [])  // far outside: nothing
        #expect(step(&engine, 1, east: 96) == [])  // inside but within the 5 m margin
        #expect(step(&engine, 2, east: 94) == [.enter])  // inside by more than h = 5 m
        #expect(step(&engine, 3, east: 10) == [])  // still inside
        #expect(step(&engine, 4, east: 104) == [])  // band: not beyond r + h
        #expect(step(&engine, 5, east: 106) == [.exit])
        #expect(step(&engine, 6, east: 300) == [])
        #expect(step(&engine, 7, east: 0) == [.enter])
        #expect(engine.isInside("home"))
    }

    @Test func eventsCarryIdsTimestampsAndWireForm() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("b"), fence("a"), Geofence(id: "far", latitude: 10, longitude: 10, radiusMeters: 50)])
        let ids = GeofenceTestIDs()
        let at = t0.addingTimeInterval(0.123_456)
        let events = engine.evaluate(
            latitude: centre.lat, longitude: centre.lon, accuracy: nil,
            timestamp: at, makeID: ids.next)
        #expect(events.map(\.geofenceId) == ["a", "b"])
        #expect(events.allSatisfy { $0.transition == .enter })
        #expect(events[0].timestamp == WireTimestamp(at).date, "truncated to the store's millisecond precision")
        #expect(Set(events.map(\.id)).count == 2)
        let wire = events[0].wire
        #expect(wire.id == events[0].id && wire.geofenceId == "a" && wire.type == .enter)
        #expect(wire.timestamp == WireTimestamp(at))
    }

    @Test func exitsComeBeforeEntersAndAJumpExitsAFenceFarAway() throws {
        var engine = GeofenceEngine()
        let there = destination(centre.lat, centre.lon, bearingDegrees: 0, meters: 100_000)
        try engine.add([fence("here"), Geofence(id: "there", latitude: there.lat, longitude: there.lon, radiusMeters: 100)])
        #expect(step(&engine, 0, east: 0) == [.enter])
        let ids = GeofenceTestIDs()
        let events = engine.evaluate(
            latitude: there.lat, longitude: there.lon, accuracy: 5,
            timestamp: t0.addingTimeInterval(60), makeID: ids.next)
        #expect(events.map { "\($0.transition.rawValue) \($0.geofenceId)" } == ["exit here", "enter there"])
    }

    @Test func noisyEdgeFlapsFarLessThanTheNaiveRule() throws {
        let r = 100.0
        var engine = GeofenceEngine()
        try engine.add([fence("edge", radius: r)])
        var rng = SeededRandom(seed: 42)
        var trueDistance = r
        var naiveInside: Bool?
        var naiveFlips = 0
        var transitions: [GeofenceTransition] = []
        for i in 0..<20_000 {
            // The device wanders slowly around the boundary; the receiver adds noise at its accuracy.
            trueDistance = min(r + 60, max(r - 60, trueDistance + rng.gaussian(sigma: 1.5)))
            let accuracy = Double.random(in: 3...30, using: &rng)
            let bearing = Double.random(in: 0..<360, using: &rng)
            let truePoint = destination(centre.lat, centre.lon, bearingDegrees: bearing, meters: trueDistance)
            let noisy = destination(
                truePoint.lat, truePoint.lon, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                meters: abs(rng.gaussian(sigma: accuracy / 2)))
            let d = Geodesy.distance(noisy.lat, noisy.lon, centre.lat, centre.lon)
            let naive = d <= r
            if let naiveInside, naiveInside != naive { naiveFlips += 1 }
            naiveInside = naive
            let events = engine.evaluate(
                latitude: noisy.lat, longitude: noisy.lon, accuracy: accuracy,
                timestamp: t0.addingTimeInterval(Double(i)), makeID: { UUID() })
            for e in events {
                // Every transition obeys the documented rule for that very fix.
                let h = GeofenceEngine.margin(accuracy: accuracy)
                if e.transition == .enter { #expect(d <= r - min(h, r / 2)) } else { #expect(d > r + h) }
                transitions.append(e.transition)
            }
        }
        #expect(naiveFlips > 1_000, "the walk really does straddle the edge (naive flips: \(naiveFlips))")
        #expect(transitions.count * 10 < naiveFlips, "hysteresis: \(transitions.count) vs naive \(naiveFlips)")
        #expect(transitions.count > 0, "the walk does cross the band")
        for (a, b) in zip(transitions, transitions.dropFirst()) {
            #expect(a != b, "never two enters (or exits) in a row")
        }
    }

    @Test func restartInsideAFenceDoesNotEnterTwice() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("home"), fence("office", radius: 10)])
        #expect(step(&engine, 0, east: 0) == [.enter, .enter])
        // What the store saves: the fences (e.g. as JSON) and the inside set.
        let savedFences = try JSONEncoder().encode(engine.list())
        let savedInside = engine.insideIDs
        #expect(savedInside == ["home", "office"])

        var relaunched = GeofenceEngine(
            fences: try JSONDecoder().decode([Geofence].self, from: savedFences), insideIDs: savedInside)
        #expect(relaunched.list() == engine.list())
        #expect(step(&relaunched, 10, east: 1) == [], "no second enter after a relaunch inside")
        #expect(step(&relaunched, 20, east: 30) == [.exit], "office only")
        #expect(step(&relaunched, 30, east: 200) == [.exit])

        // Stale ids in the saved state are dropped.
        let restored = GeofenceEngine(fences: [fence("home")], insideIDs: ["home", "gone"])
        #expect(restored.insideIDs == ["home"])
    }

    @Test func notifyFlagsSilenceEventsButStateStillTracksCrossings() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("in-only", exit: false), fence("out-only", entry: false), fence("silent", entry: false, exit: false)])
        let p = destination(centre.lat, centre.lon, bearingDegrees: 90, meters: 0)
        let enter = engine.evaluateCrossings(latitude: p.lat, longitude: p.lon, accuracy: 5, timestamp: t0, makeID: { UUID() })
        #expect(enter.events.map(\.geofenceId) == ["in-only"])
        #expect(enter.stateChanges == ["in-only": true, "out-only": true, "silent": true])
        #expect(step(&engine, 1, east: 0) == [], "state is inside for all three")
        let q = destination(centre.lat, centre.lon, bearingDegrees: 90, meters: 500)
        let exit = engine.evaluateCrossings(
            latitude: q.lat, longitude: q.lon, accuracy: 5,
            timestamp: t0.addingTimeInterval(2), makeID: { UUID() })
        #expect(exit.events.map(\.geofenceId) == ["out-only"])
        #expect(exit.events.map(\.transition) == [.exit])
        #expect(exit.stateChanges == ["in-only": false, "out-only": false, "silent": false])
        #expect(engine.insideIDs.isEmpty)
    }

    @Test func addIsAtomicAndTheErrorNamesTheBadEntry() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("keep")])
        #expect(throws: BeekonError.invalidConfiguration("geofence \"x\": radiusMeters must be > 0 (got 0.0)")) {
            try engine.add([fence("a"), fence("x", radius: 0), fence("c")])
        }
        #expect(engine.list().map(\.id) == ["keep"], "nothing from the failed call was added")

        func message(_ f: Geofence) -> String? {
            do {
                try f.validate()
                return nil
            } catch { return error.description }
        }
        #expect(message(fence("")) == "invalid configuration: geofence \"\": id must be 1–100 characters (got 0)")
        #expect(message(fence(String(repeating: "é", count: 100))) == nil, "100 characters is fine")
        // Code points, not grapheme clusters: one "character" of 101 code points is refused.
        #expect(message(fence("a" + String(repeating: "\u{0301}", count: 100)))?.contains("(got 101)") == true)
        #expect(message(fence(String(repeating: "y", count: 101)))?.contains("(got 101)") == true)
        #expect(
            message(Geofence(id: "n", latitude: 90.5, longitude: 0, radiusMeters: 1))?
                .contains("geofence \"n\": latitude") == true)
        #expect(
            message(Geofence(id: "w", latitude: 0, longitude: .nan, radiusMeters: 1))?
                .contains("geofence \"w\": longitude") == true)
        #expect(
            message(Geofence(id: "i", latitude: 0, longitude: 0, radiusMeters: .infinity))?
                .contains("radiusMeters must be > 0") == true)
        #expect(message(Geofence(id: "edge", latitude: -90, longitude: 180, radiusMeters: 0.001)) == nil)
    }

    @Test func reAddingAnIdReplacesIt() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("home")])
        #expect(step(&engine, 0, east: 0) == [.enter])

        // Same region, new flags: replaced, state kept (re-registering at launch is silent).
        try engine.add([fence("home", entry: false)])
        #expect(engine.list() == [fence("home", entry: false)])
        #expect(engine.isInside("home"))
        #expect(step(&engine, 1, east: 0) == [])

        // New radius: a new fence, state reset to unknown; no exit for the old region.
        try engine.add([fence("home", radius: 200)])
        #expect(!engine.isInside("home"))
        #expect(step(&engine, 2, east: 0) == [.enter])

        // Moved away: state reset, nothing emitted, and the old place no longer matches.
        let away = destination(centre.lat, centre.lon, bearingDegrees: 0, meters: 5_000)
        try engine.add([Geofence(id: "home", latitude: away.lat, longitude: away.lon, radiusMeters: 200)])
        #expect(engine.count == 1)
        #expect(step(&engine, 3, east: 0) == [])

        // Within one call the last duplicate wins.
        try engine.add([fence("dup", radius: 10), fence("dup", radius: 20)])
        #expect(engine.fence(id: "dup")?.radiusMeters == 20)
    }

    @Test func removeDropsFencesAndStateAndIgnoresUnknownIds() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("a"), fence("b")])
        #expect(step(&engine, 0, east: 0) == [.enter, .enter])
        engine.remove(ids: ["a", "nope"])
        #expect(engine.list().map(\.id) == ["b"])
        #expect(engine.insideIDs == ["b"])
        #expect(step(&engine, 1, east: 1_000) == [.exit], "a removed fence emits nothing")
        try engine.add([fence("a")])
        #expect(step(&engine, 2, east: 0) == [.enter, .enter], "re-added after removal: a new fence")
    }

    @Test func unusableCoordinatesChangeNothing() throws {
        var engine = GeofenceEngine()
        try engine.add([fence("a")])
        for (lat, lon) in [(Double.nan, 11.0), (48.0, .infinity), (91.0, 11.0), (48.0, 181.0)] {
            let r = engine.evaluateCrossings(latitude: lat, longitude: lon, accuracy: 5, timestamp: t0, makeID: { UUID() })
            #expect(r == GeofenceEngine.Evaluation())
        }
    }

    @Test func fencesDecodeWithDefaultNotifyFlags() throws {
        let json =
            #"[{"id":"a","latitude":1.5,"longitude":-2,"radiusMeters":50},"#
            + #"{"id":"b","latitude":0,"longitude":0,"radiusMeters":1,"notifyOnEntry":false,"notifyOnExit":false}]"#
        let fences = try JSONDecoder().decode([Geofence].self, from: Data(json.utf8))
        #expect(fences[0] == Geofence(id: "a", latitude: 1.5, longitude: -2, radiusMeters: 50))
        #expect(!fences[1].notifyOnEntry && !fences[1].notifyOnExit)
    }

    @Test func manyFencesStayCorrect() throws {
        // 10,000 fences around one city; the engine's enters equal the plain rule over all fences.
        var rng = SeededRandom(seed: 7)
        var fences: [Geofence] = []
        for i in 0..<10_000 {
            let p = destination(
                centre.lat, centre.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...20_000, using: &rng))
            fences.append(
                Geofence(
                    id: "f\(i)", latitude: p.lat, longitude: p.lon,
                    radiusMeters: .random(in: 20...2_000, using: &rng)))
        }
        var engine = GeofenceEngine()
        try engine.add(fences)
        #expect(engine.count == 10_000)
        for _ in 0..<30 {
            let p = destination(
                centre.lat, centre.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...20_000, using: &rng))
            var fresh = engine  // a copy with nothing inside yet
            let entered = fresh.evaluate(latitude: p.lat, longitude: p.lon, accuracy: 10, timestamp: t0, makeID: { UUID() })
            let expected = fences.filter {
                GeofenceEngine.enters(
                    distance: Geodesy.distance(p.lat, p.lon, $0.latitude, $0.longitude),
                    radius: $0.radiusMeters, margin: 10)
            }.map(\.id).sorted()
            #expect(entered.map(\.geofenceId) == expected)
        }
    }
}
