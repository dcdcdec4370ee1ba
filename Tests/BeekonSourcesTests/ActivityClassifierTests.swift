import Foundation
import Testing
@testable import Beekon
import BeekonSources

/// The fix-stream activity classifier (BY-4, FX-1): its features, its hysteresis, `unknown`
/// when unsure, the shipped model's provenance (trained on the split's training recordings
/// only) and its figures on the labelled real recordings (Tests/Data/labelled).
@Suite("Activity classifier (BY-4)") struct ActivityClassifierTests {
    static let start = 1_700_000_000.0

    /// Fixes every `step` seconds moving north at the given speeds (one speed per fix, m/s),
    /// turning `turn` degrees to the east at each fix.
    static func fixes(speeds: [Double], step: Double = 1, turn: Double = 0) -> [RawFix] {
        var lat = 52.0
        var lon = 13.0
        var heading = 0.0
        var out: [RawFix] = []
        for (i, s) in speeds.enumerated() {
            if i > 0 {
                let d = s * step
                lat += d * cos(heading * .pi / 180) / 111_195
                lon += d * sin(heading * .pi / 180) / (111_195 * cos(lat * .pi / 180))
                heading += turn
            }
            out.append(RawFix(timestamp: Date(timeIntervalSince1970: start + Double(i) * step), latitude: lat, longitude: lon))
        }
        return out
    }

    static func classify(_ fixes: [RawFix], _ classifier: SpeedActivityClassifier = SpeedActivityClassifier()) -> [Activity] {
        var c = classifier
        return fixes.map { c.classify($0) }
    }

    static func features(_ fixes: [RawFix]) -> ActivityFeatures? {
        var w = ActivityFeatureWindow()
        for f in fixes { w.add(f) }
        return w.features()
    }

    // MARK: features

    @Test("BY-4: features of a steady straight ride: speed percentiles at the speed, no acceleration, no turns, no stops")
    func steadyFeatures() throws {
        let f = try #require(Self.features(Self.fixes(speeds: Array(repeating: 6, count: 300))))
        #expect(abs(f.speedP50 - 6) < 0.05 && abs(f.speedP85 - 6) < 0.05 && abs(f.longSpeedP95 - 6) < 0.05)
        #expect(abs(f.longMovingP50 - 6) < 0.05)
        #expect(f.accelMean < 0.01 && f.accelStd < 0.01 && f.speedCV < 0.01)
        #expect(f.headingPer100m < 0.5)
        #expect(f.stopShare == 0 && f.stopsPer10Min == 0)
        #expect(f.longSpeedCV < 0.01 && abs(f.longLowRatio - 1) < 0.01 && f.longAccelStd < 0.01 && f.longMaxDecel < 0.01, "\(f)")
        #expect(f.vector.count == ActivityFeatures.names.count)
    }

    @Test("BY-4: speeds are measured between anchors ≥ 10 s apart: 1 s and 11 s sampling of one motion agree")
    func samplingIndependence() throws {
        let speeds = (0..<600).map { 5 + 3 * sin(Double($0) / 40) }
        let dense = try #require(Self.features(Self.fixes(speeds: speeds)))
        let sparse = try #require(Self.features(Self.fixes(speeds: speeds).enumerated().filter { $0.offset % 11 == 0 }.map(\.element)))
        #expect(abs(dense.speedP50 - sparse.speedP50) < 0.5, "\(dense) vs \(sparse)")
        #expect(abs(dense.longSpeedP95 - sparse.longSpeedP95) < 0.5, "\(dense) vs \(sparse)")
    }

    @Test("BY-4: stop-and-go: stops counted per 10 min, stop share, acceleration spread")
    func stopAndGo() throws {
        // 600 s: 4 cycles of 120 s at 10 m/s then 30 s standing.
        let cycle = Array(repeating: 10.0, count: 120) + Array(repeating: 0.0, count: 30)
        let f = try #require(Self.features(Self.fixes(speeds: Array(repeating: cycle, count: 4).flatMap { $0 } + [10, 10])))
        #expect(f.stopsPer10Min >= 3 && f.stopsPer10Min <= 4.5, "\(f)")
        #expect(f.stopShare > 0.1 && f.stopShare < 0.25, "\(f)")
        #expect(f.accelStd > 0.2, "\(f)")
        #expect(f.longSpeedP95 > 9.5)
        // Braking from 10 m/s to a standstill within one 10 s anchor step: about 1 m/s².
        #expect(f.longMaxDecel > 0.7 && f.longMaxDecel < 1.1, "\(f)")
        #expect(f.longSpeedCV > 0.35 && f.longAccelStd > 0.2, "\(f)")
    }

    @Test("BY-4: the long window's shape of speed, whatever the speed: stop-and-go traffic against a rolling ride at the same cruise")
    func speedShape() throws {
        // A bicycle on rolling roads: 6 ± 1 m/s, no stops.
        let ride = try #require(Self.features(Self.fixes(speeds: (0..<900).map { 6 + sin(Double($0) / 40) })))
        // Traffic: a minute at 6 m/s, a minute crawling at 1.5 m/s, over and over.
        let cycle = Array(repeating: 6.0, count: 60) + Array(repeating: 1.5, count: 60)
        let traffic = try #require(Self.features(Self.fixes(speeds: Array(repeating: cycle, count: 8).flatMap { $0 })))
        #expect(abs(ride.longMovingP50 - traffic.longMovingP50) < 1, "about the same cruising speed: \(ride) vs \(traffic)")
        #expect(ride.longSpeedCV < 0.2 && traffic.longSpeedCV > 0.4, "\(ride.longSpeedCV) vs \(traffic.longSpeedCV)")
        #expect(ride.longLowRatio > 0.75 && traffic.longLowRatio < 0.4, "\(ride.longLowRatio) vs \(traffic.longLowRatio)")
        #expect(ride.longAccelStd < traffic.longAccelStd / 3, "\(ride.longAccelStd) vs \(traffic.longAccelStd)")
        #expect(ride.longMaxDecel < traffic.longMaxDecel / 3, "\(ride.longMaxDecel) vs \(traffic.longMaxDecel)")
    }

    @Test("BY-4: heading change per 100 m: a steady 2° per second turn at 5 m/s is 40° per 100 m")
    func heading() throws {
        let f = try #require(Self.features(Self.fixes(speeds: Array(repeating: 5, count: 200), turn: 2)))
        #expect(abs(f.headingPer100m - 40) < 4, "\(f.headingPer100m)")
    }

    @Test("BY-4: too little data gives no features; a gap over 60 s gives no speed")
    func tooLittle() {
        #expect(Self.features(Self.fixes(speeds: Array(repeating: 3, count: 15))) == nil)
        #expect(Self.features(Self.fixes(speeds: [3, 3], step: 61)) == nil)
    }

    // MARK: the classifier

    @Test("BY-4: unknown for the first 20 s, then the class; stationary when still")
    func basics() {
        let walking = Self.classify(Self.fixes(speeds: Array(repeating: 1.4, count: 120)))
        #expect(walking.prefix(19).allSatisfy { $0 == .unknown })
        #expect(walking.last == .walking)
        #expect(Self.classify(Self.fixes(speeds: Array(repeating: 3.2, count: 120))).last == .running)
        #expect(Self.classify(Self.fixes(speeds: Array(repeating: 10, count: 120))).last == .cycling)
        #expect(Self.classify(Self.fixes(speeds: Array(repeating: 0.05, count: 120))).last == .stationary)
        #expect(Self.classify(Self.fixes(speeds: Array(repeating: 25, count: 120))).last == .automotive)
    }

    @Test("BY-4: physical limits: no walk above 3.5 m/s, no run above 7 m/s (short or long window), no bicycle above 17 m/s")
    func plausibility() throws {
        let fast = try #require(Self.features(Self.fixes(speeds: Array(repeating: 20, count: 100))))
        #expect(SpeedActivityClassifier.plausible(fast) == [false, false, false, true])
        let jog = try #require(Self.features(Self.fixes(speeds: Array(repeating: 3, count: 100))))
        #expect(SpeedActivityClassifier.plausible(jog) == [true, true, true, true])
        // A climb at running pace 5 minutes after a 9 m/s descent: a bicycle, not a run.
        let climb = try #require(Self.features(Self.fixes(speeds: Array(repeating: 9, count: 300) + Array(repeating: 3, count: 200))))
        #expect(climb.speedP85 <= 3.5 && climb.longSpeedP95 > 7)
        #expect(SpeedActivityClassifier.plausible(climb) == [true, false, true, true])
        // The same climb once the descent has left the long window (600 s): a run is possible again.
        let later = try #require(Self.features(Self.fixes(speeds: Array(repeating: 9, count: 300) + Array(repeating: 3, count: 700))))
        #expect(SpeedActivityClassifier.plausible(later) == [true, true, true, true])
    }

    @Test("BY-4: a climb at running pace within 600 s of a 9 m/s descent is never called running; alone, the same pace is")
    func climbAfterDescent() {
        let climb = Array(repeating: 3.0, count: 240)
        let ride = Self.classify(Self.fixes(speeds: Array(repeating: 9, count: 300) + climb))
        #expect(!ride[300...].contains(.running), "\(ride[300...])")
        #expect(Self.classify(Self.fixes(speeds: climb)).last == .running)
    }

    @Test("BY-4: hysteresis — a burst shorter than confirmSeconds does not flip the answer; a lasting change does")
    func hysteresis() throws {
        let steady = Array(repeating: 1.4, count: 180)
        // 12 s at running pace (one anchor) inside a walk.
        let burst = Self.classify(Self.fixes(speeds: steady + Array(repeating: 3.2, count: 12) + Array(repeating: 1.4, count: 60)))
        #expect(burst[30...].allSatisfy { $0 == .walking }, "\(burst[30...])")
        let change = Self.classify(Self.fixes(speeds: steady + Array(repeating: 3.2, count: 240)))
        #expect(change[30..<181].allSatisfy { $0 == .walking })
        #expect(change.last == .running)
        // The switch waits at least confirmSeconds (15 s) after the speed changed.
        let firstRunning = try #require(change.firstIndex(of: .running))
        #expect(firstRunning >= 180 + 15, "\(firstRunning)")
    }

    @Test("BY-4: weak evidence is unknown, not a guess: a model with no information never answers a class")
    func unsure() {
        var c = SpeedActivityClassifier()
        c.model = ActivityModel(
            means: Array(repeating: 0, count: ActivityFeatures.names.count),
            scales: Array(repeating: 1, count: ActivityFeatures.names.count),
            weights: Array(repeating: Array(repeating: 0, count: ActivityFeatures.names.count), count: 4), biases: [0, 0, 0, 0])
        let answers = Self.classify(Self.fixes(speeds: Array(repeating: 1.4, count: 200)), c)
        #expect(answers.allSatisfy { $0 == .unknown })
        // With the shipped model, a steady walk is walking with high confidence.
        var shipped = SpeedActivityClassifier()
        for fix in Self.fixes(speeds: Array(repeating: 1.4, count: 200)) { _ = shipped.classify(fix) }
        #expect(shipped.confidence >= shipped.minimumConfidence)
    }

    // MARK: training and the labelled set

    @Test("BY-4: training separates separable classes and is deterministic; the source it writes carries its numbers")
    func training() {
        let samples: [(x: [Double], y: Int, weight: Double)] = (0..<200).map { i in
            let y = i % 4
            return ((0..<9).map { j in j == 0 ? Double(y) + Double(i % 7) * 0.05 : Double((i * 31 + j) % 5) * 0.01 }, y, 1)
        }
        let a = ActivityModel.train(samples)
        #expect(a == ActivityModel.train(samples))
        for s in samples {
            let p = a.probabilities(s.x)
            #expect(p.indices.max { p[$0] < p[$1] } == s.y)
        }
        let source = a.swiftSource(header: "test")
        #expect(source.contains("package static let trained = ActivityModel(") && source.contains(String(format: "%.6f", a.biases[0])))
    }

    static let labelled = SharedData.url("labelled")
    /// The labelled set, read once for the tests that need all of it (31 recordings, ~80,000 fixes).
    static let labelledSet = Result { try LabelledSet.load(labelled) }

    @Test("BY-4: the shipped coefficients are exactly what training on SPLIT.md's training recordings gives")
    func shippedModelProvenance() throws {
        let set = try Self.labelledSet.get()
        #expect(set.hasSplit && set.recordings.filter(\.training).count == 12 && set.recordings.filter { !$0.training }.count == 19)
        let trained = ActivityEvaluation.train(set)
        let shipped = ActivityModel.trained
        for (a, b) in zip(
            [trained.means, trained.scales, trained.biases] + trained.weights,
            [shipped.means, shipped.scales, shipped.biases] + shipped.weights)
        {
            #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 1e-4 }, "\(a) vs \(b): run scripts/train-activity.sh")
        }
    }

    @Test("BY-4: the split's table parses; an unknown mode is refused; without a split, folders name the modes")
    func split() throws {
        let rows = try LabelledSet.parseSplit(
            """
            | set | mode | recording |
            |---|---|---|
            | training | cycling | `cycling/a.tcx` |
            | evaluation | train | train/b.csv |
            """)
        #expect(
            rows.map(\.set) == ["training", "evaluation"] && rows.map(\.mode) == ["cycling", "train"] && rows[0].path == "cycling/a.tcx")
        #expect(throws: TrackReadError.self) { try LabelledSet.parseSplit("| training | flying | a.gpx |") }
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent(
            "beekon-labelled-\(ProcessInfo.processInfo.processIdentifier)")
        defer { try? FileManager.default.removeItem(at: tmp) }
        try FileManager.default.createDirectory(at: tmp.appendingPathComponent("walking"), withIntermediateDirectories: true)
        try SharedData.data("gpx/togeojson_apple_watch_walk_1hz.gpx").write(to: tmp.appendingPathComponent("walking/w.gpx"))
        let set = try LabelledSet.load(tmp)
        #expect(!set.hasSplit && set.recordings.map(\.name) == ["walking/w.gpx"] && set.recordings[0].label == .walking)
        #expect(throws: TrackReadError.self) { try LabelledSet.load(tmp.appendingPathComponent("walking")) }
    }

    /// Floors under the figures in BENCHMARKS.md, so a change that loses ground shows.
    /// The targets (cycling, automotive, running ≥ 80 %, walking ≥ 90 %, the bus ≥ 93.8 %)
    /// are met since the fifth round (12 training recordings); the per-mode floors sit just under
    /// the figures, the per-ride ones at the target.
    @Test("BY-4: the shipped model on the labelled recordings: the walk ≥ 98.5 %, evaluation figures at their measured floors")
    func labelledFigures() throws {
        let result = ActivityEvaluation(try Self.labelledSet.get(), leaveOneOut: false)
        func correct(_ name: String) -> Double { result.shipped.first { $0.name.hasSuffix(name) }?.confusion.movingCorrect ?? -1 }
        #expect(correct("togeojson_apple_watch_walk_1hz.gpx") >= 0.985)
        // The old bus: 93.8 % with the first (speed-threshold) classifier, 72.2 % before the speed-shape features.
        #expect(correct("movingpandas_304_to_UL_bus_1hz.gpx") >= 0.938)
        let evaluation = ActivityEvaluation.perMode(result.shipped.filter { !$0.training })
        #expect(ActivityEvaluation.correct(evaluation["walking"] ?? [:], label: .walking) >= 0.94)
        // 0.79 before the speed-shape features (fourth round).
        #expect(ActivityEvaluation.correct(evaluation["automotive"] ?? [:], label: .automotive) >= 0.88)
        for trip in ["bus-560-dev6", "bus-550-dev8", "car-dev3-sepetlahdentie-konemiehentie"] {
            #expect(correct("aalto-trafficsense_\(trip).csv") >= 0.85)
        }
        #expect(ActivityEvaluation.correct(evaluation["train"] ?? [:], label: .automotive) >= 0.90)
        // 79.9 % before the fifth round's training recordings, 81.4 % with them (target 80 %).
        #expect(ActivityEvaluation.correct(evaluation["running"] ?? [:], label: .running) >= 0.80)
        // The fourth round's three evaluation rides: 68.1 % before the fifth round's training
        // rides, 93.8 % after; with sweat's two held-out rides, 75.6 % → 87.6 % (target 80 %).
        #expect(ActivityEvaluation.correct(evaluation["cycling"] ?? [:], label: .cycling) >= 0.86)
        for ride in ["tcxreader_mapmyride-biking.tcx", "gpsa_biking-01.tcx", "tracklib_utagawavtt-22245.gpx", "sweat_berkelland-fr935.gpx"]
        {
            #expect(correct(ride) >= 0.80, "\(ride)")
        }
        // The hilly ride: 77.5 % (its climbs called running, some descents automotive).
        #expect(correct("sweat_stavelot-edge1000.gpx") >= 0.75)
        // The second round's held-out sources (tracklib, gpxpy): the walks are walks (MC was
        // 100 % before the fifth round, 98.2 % after: 3 of 167 fixes called running).
        for walk in ["MC", "DC", "FC"] { #expect(correct("tracklib_hike-\(walk)-visorando-phone.gpx") >= 0.98) }
        #expect(result.report.contains("== evaluation set: shipped model, never trained on =="))
    }

    /// The two longest rows of their modes, which held cycling and automotive under 60 %
    /// leave-one-recording-out before the speed-shape features (the bus 38.6 %, the ride 43.5 %).
    /// Since the fifth round's slow rides the held-out bus scores 53.6 % (62.4 % before; the
    /// only other 1 Hz vehicle is a 97-fix car), the ride 84.8 % (50.1 %): BENCHMARKS.md.
    @Test(
        "BY-4: leave-one-recording-out on the slow 1 Hz city bus and the fast road ride: each judged by a model trained on all the others")
    func longRowsHeldOut() throws {
        let set = try Self.labelledSet.get()
        let features = set.recordings.map { ActivityModel.trainingFeatures($0.fixes) }
        let floors = ["../gpx/movingpandas_304_to_UL_bus_1hz.gpx": 0.52, "cycling/tormoder-fit_edge530-road.gpx": 0.80]
        let rows = ActivityEvaluation.heldOut(set, features: features, by: \.name) { floors[$0.name] != nil }
        #expect(rows.count == 2)
        for row in rows {
            #expect(row.confusion.movingCorrect >= floors[row.name] ?? 1, "\(row.name): \(row.confusion.table)")
        }
    }

    @Test("BY-4: leave-one-recording-out judges each recording by a model that never saw it")
    func leaveOneOut() {
        func rec(_ name: String, _ mode: String, _ speed: Double) -> LabelledSet.Recording {
            LabelledSet.Recording(
                name: name, mode: mode, training: true, fixes: Self.fixes(speeds: (0..<300).map { speed + 0.3 * sin(Double($0) / 9) }))
        }
        let set = LabelledSet(
            recordings: [
                rec("w1", "walking", 1.3), rec("w2", "walking", 1.5), rec("r1", "running", 3.0), rec("r2", "running", 3.4),
                rec("c1", "cycling", 6), rec("c2", "cycling", 7), rec("a1", "automotive", 15), rec("a2", "automotive", 20),
            ], hasSplit: true)
        let result = ActivityEvaluation(set, leaveOneOut: true)
        #expect(result.leaveOneOut.map(\.name) == set.recordings.map(\.name))
        for row in result.leaveOneOut where row.name != "a2" && row.name != "w1" {
            #expect(row.confusion.movingCorrect > 0.8, "\(row.name): \(row.confusion.table)")
        }
        #expect(result.report.contains("== leave-one-recording-out"))
    }

    @Test("BY-4: leave-one-source-out trains without every recording of the judged one's source (file name up to its first _)")
    func leaveOneSourceOut() {
        #expect(
            LabelledSet.Recording(name: "walking/tracklib_hike-MC.gpx", mode: "walking", training: false, fixes: []).source == "tracklib")
        #expect(LabelledSet.Recording(name: "../gpx/togeojson_walk.gpx", mode: "walking", training: true, fixes: []).source == "togeojson")
        func rec(_ name: String, _ mode: String, _ speed: Double) -> LabelledSet.Recording {
            LabelledSet.Recording(
                name: name, mode: mode, training: true, fixes: Self.fixes(speeds: (0..<300).map { speed + 0.3 * sin(Double($0) / 9) }))
        }
        // Both walks come from one source: leave-one-recording-out still trains on a walk,
        // leave-one-source-out has none to train on, so it cannot answer walking.
        let set = LabelledSet(
            recordings: [
                rec("s_w1", "walking", 1.3), rec("s_w2", "walking", 1.5), rec("r1", "running", 3.0), rec("r2", "running", 3.4),
                rec("c1", "cycling", 6), rec("c2", "cycling", 7), rec("a1", "automotive", 15), rec("a2", "automotive", 20),
            ], hasSplit: true)
        let result = ActivityEvaluation(set, leaveOneOut: true)
        #expect(result.leaveOneSourceOut.map(\.name) == set.recordings.map(\.name))
        let byRecording = Dictionary(uniqueKeysWithValues: result.leaveOneOut.map { ($0.name, $0.confusion.movingCorrect) })
        let bySource = Dictionary(uniqueKeysWithValues: result.leaveOneSourceOut.map { ($0.name, $0.confusion.movingCorrect) })
        #expect((byRecording["s_w2"] ?? 0) > 0.8)
        #expect(bySource["s_w1"] == 0 && bySource["s_w2"] == 0)
        // A source of one recording is left out alone: the same model as leave-one-recording-out.
        #expect(bySource["c1"] == byRecording["c1"])
        #expect(result.report.contains("== leave-one-source-out"))
    }
}
