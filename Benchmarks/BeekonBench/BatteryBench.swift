import Beekon
import BeekonSources
import Foundation

// B1 (issue 51): a battery budget from the plans. Each recording of Tests/Data/gpx (a walk, a bus
// commute, a drive) and a synthetic office day (8 h still at 1 Hz, ±3 m noise: the repository
// has no such recording) is replayed through `BatteryBudget` for each preset and the two family
// profiles, against the naive baseline in the same run (best accuracy, every fix, no pause). The
// row is fixes delivered to the app per hour (wake-ups); the details carry seconds per accuracy
// class, region / significant-change / refresh wakes, uploads, and the fidelity (max and p95
// distance from every raw fix to the stored polyline, the `beekon fidelity` measure).
// Deterministic: one run is the figure.

func batteryTraces() -> [(name: String, fixes: [RawFix])] {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Tests/Data/gpx")
        .standardizedFileURL
    var traces: [(String, [RawFix])] = []
    for (name, file) in [
        ("walk", "togeojson_apple_watch_walk_1hz.gpx"), ("commute-bus", "movingpandas_304_to_UL_bus_1hz.gpx"),
        ("drive", "gpxgo_visnjan_4s.gpx"),
    ] {
        guard let read = try? TrackFile.read(contentsOf: dir.appendingPathComponent(file)) else { continue }
        var unique: [RawFix] = []
        for f in read.fixes.sorted(by: { $0.timestamp < $1.timestamp })
        where f.latitude.isFinite && f.longitude.isFinite && (unique.last.map { f.timestamp > $0.timestamp } ?? true) {
            unique.append(f)
        }
        traces.append((name, unique))
    }
    var seed: UInt64 = 51
    func noise() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(seed >> 11) / Double(1 << 53) - 0.5) * 6  // ±3 m
    }
    let office = (0..<(8 * 3600)).map { i in
        RawFix(
            timestamp: Date(timeIntervalSince1970: 1_800_000_000 + Double(i)), latitude: 45.8 + noise() / 111_195,
            longitude: 15.97 + noise() / 77_600, accuracy: 5)
    }
    traces.append(("office-8h-synthetic", office))
    return traces
}

func b1() -> [Comparison] {
    let variants: [(String, BeekonConfig)] = [
        ("saver", BeekonConfig(preset: .saver)), ("balanced", BeekonConfig(preset: .balanced)),
        ("precision", BeekonConfig(preset: .precision)),
        ("family-foreground", LocationProfile.foreground.applied(to: BeekonConfig())),
        ("family-background", LocationProfile.background.applied(to: BeekonConfig())),
    ]
    var results: [Comparison] = []
    for trace in batteryTraces() {
        let naive = BatteryBudget.naive(trace.fixes)
        for (name, config) in variants {
            let budget = BatteryBudget.replay(trace.fixes, config: config)
            let fidelity = budget.fidelity(against: trace.fixes)
            func perHour(_ n: Int) -> String { String(format: "%.1f", budget.hours > 0 ? Double(n) / budget.hours : 0) }
            var details = [
                "hours": String(format: "%.2f", budget.hours), "raw_fixes": "\(trace.fixes.count)",
                "delivered": "\(budget.delivered)", "baseline_delivered": "\(naive.delivered)",
                "region_wakes_per_h": perHour(budget.regionWakes), "significant_wakes_per_h": perHour(budget.significantWakes),
                "refresh_wakes_per_h": perHour(budget.refreshWakes), "uploads_per_h": perHour(budget.uploads),
                "baseline_uploads_per_h": String(format: "%.1f", naive.hours > 0 ? Double(naive.uploads) / naive.hours : 0),
                "stored": "\(budget.stored.count)", "max_error_m": String(format: "%.1f", fidelity.max),
                "p95_error_m": String(format: "%.1f", fidelity.p95),
            ]
            for c in BatteryBudget.AccuracyClass.allCases {
                details["seconds_\(c.rawValue)"] = String(format: "%.0f", budget.seconds[c] ?? 0)
            }
            results.append(
                Comparison(
                    id: "B1 \(trace.name) \(name)", what: "fixes delivered to the app per hour (wake-ups), plans vs naive",
                    unit: "wakes/h", ours: Stats([budget.deliveredPerHour]), baseline: Stats([naive.deliveredPerHour]),
                    ratio: naive.deliveredPerHour > 0 ? budget.deliveredPerHour / naive.deliveredPerHour : .nan, details: details))
        }
    }
    return results
}
