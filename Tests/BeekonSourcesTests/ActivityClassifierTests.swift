import Foundation
import Testing
@testable import Beekon
import BeekonSources

/// The default activity classifier (BY-4, FX-1) on the labelled real tracks and on
/// synthetic speed series: targets met, hysteresis, `unknown` when unsure.
@Suite("Activity classifier (BY-4)") struct ActivityClassifierTests {
    static func fixes(speeds: [Double], start: Double = 1_700_000_000) -> [RawFix] {
        speeds.enumerated().map { i, s in
            RawFix(timestamp: Date(timeIntervalSince1970: start + Double(i)), latitude: 52, longitude: 13, speed: s)
        }
    }

    static func classify(_ speeds: [Double]) -> [Activity] {
        var c = SpeedActivityClassifier()
        return fixes(speeds: speeds).map { c.classify($0) }
    }

    @Test(
        "BY-4: the walk's moving fixes are walking (≥ 90 %), the bus's automotive (≥ 80 %)",
        arguments: [
            ("gpx/togeojson_apple_watch_walk_1hz.gpx", Activity.walking, 0.90),
            ("gpx/movingpandas_304_to_UL_bus_1hz.gpx", Activity.automotive, 0.80),
        ])
    func labelledTracks(file: String, label: Activity, target: Double) throws {
        let fixes = try GPXReader.read(contentsOf: SharedData.url(file)).fixes
        let result = ActivityConfusion(fixes: fixes, label: label, classifier: SpeedActivityClassifier())
        #expect(result.movingCorrect >= target, "\(file): \(result.movingCorrect)\n\(result.table)")
        // Most stationary truth is called stationary or unknown, not a moving guess... on the walk's final stop.
        if label == .walking {
            let still = result.counts[.stationary] ?? [:]
            #expect((still[.stationary] ?? 0) > (still[.walking] ?? 0), "\(result.table)")
        }
    }

    @Test("BY-4: unknown until 10 s of data, then the class; stationary when still")
    func basics() {
        let walking = Self.classify(Array(repeating: 1.4, count: 40))
        #expect(walking.prefix(5).allSatisfy { $0 == .unknown })
        #expect(walking.last == .walking)
        #expect(Self.classify(Array(repeating: 0.05, count: 40)).last == .stationary)
        #expect(Self.classify(Array(repeating: 15, count: 40)).last == .automotive)
        #expect(Self.classify(Array(repeating: 5.5, count: 40)).last == .cycling)
    }

    @Test("BY-4: hysteresis — a short burst does not flip the answer")
    func hysteresis() {
        let speeds = Array(repeating: 1.4, count: 60) + Array(repeating: 3.5, count: 5) + Array(repeating: 1.4, count: 30)
        let answers = Self.classify(speeds)
        #expect(answers[40...].allSatisfy { $0 == .walking }, "\(answers[40...])")
    }

    @Test("BY-4: ambiguous speeds are unknown, not a guess")
    func unsure() {
        // Speeds spread from standing to driving within one window: no class fits.
        let speeds = (0..<80).map { i in [0.0, 2.0, 6.0, 3.0, 0.2, 4.5][i % 6] }
        #expect(Self.classify(speeds).last == .unknown)
    }

    @Test("BY-4: a bus stop does not end the automotive answer (vehicle memory)")
    func busStop() {
        let speeds = Array(repeating: 10.0, count: 60) + Array(repeating: 1.5, count: 60) + Array(repeating: 8.0, count: 20)
        let answers = Self.classify(speeds)
        #expect(answers[60..<120].allSatisfy { $0 == .automotive }, "\(answers[60..<120])")
    }
}
