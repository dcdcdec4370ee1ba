import Beekon
import Foundation

// MARK: - P1-pipeline and D1 (issue 16)

/// P1 with the activity classifier, a heartbeat and the privacy blur on, against P1 in the
/// same run (interleaved). The blur runs as a batch is encoded for upload, once per fix: its
/// measured per-fix cost over the same rows is added to the pipeline's.
func p1Pipeline(runs: Int, dir: URL) async throws -> Comparison {
    let (all, source) = benchFixes()
    let fixes = Array(all.prefix(size(all.count, tiny: 200)))
    let plain = BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0)
    var piped = plain
    piped.classifyActivity = true
    piped.heartbeatSeconds = 30
    piped.foregroundProfile = LocationProfile(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0)
    let filter = PrivacyFilter(config: PrivacyConfig(blurRadiusMeters: 200))
    var ours: [Double] = []
    var base: [Double] = []
    var activities = 0
    var blurs: [Double] = []
    var classifier: [Double] = []
    var labelled = 0
    for run in 0...runs {
        let (b, _) = try await sdkPerFix(
            fixes, config: plain, path: dir.appendingPathComponent("p1p-plain-\(run).sqlite").path, label: "P1"
        ) { _ in }
        let (p, rows) = try await sdkPerFix(
            fixes, config: piped, path: dir.appendingPathComponent("p1p-pipe-\(run).sqlite").path, label: "P1-pipeline"
        ) { beekon in try await beekon.history(from: .distantPast, to: .distantFuture) }
        let wires = rows.map(\.wire)
        var kept = 0
        let blur = await measure { for w in wires where filter.apply(w) != nil { kept += 1 } } / Double(max(1, wires.count))
        guard kept == wires.count else { throw BenchError(description: "P1-pipeline: the blur dropped fixes") }
        activities = rows.filter { $0.activity != nil }.count
        // The classifier alone over the same fixes: its share of the gap (issue 29).
        var alone = SpeedActivityClassifier()
        labelled = 0
        let classify = await measure { for f in fixes where alone.classify(f) != .unknown { labelled += 1 } } / Double(max(1, fixes.count))
        if run > 0 {
            base.append(b * 1e6)
            ours.append((p + blur) * 1e6)
            blurs.append(blur * 1e6)
            classifier.append(classify * 1e6)
        }
    }
    let o = Stats(ours)
    let b = Stats(base)
    return Comparison(
        id: "P1-pipeline", what: "P1 with activity classifier + heartbeat + 200 m blur vs P1, per fix", unit: "µs/fix",
        ours: o, baseline: b, ratio: o.median / b.median,
        details: [
            "fixes_per_run": "\(fixes.count)", "source": source, "classified": "\(activities)",
            "blur_us_per_fix": String(format: "%.2f", Stats(blurs).median),
            "classifier_alone_us_per_fix": String(format: "%.2f", Stats(classifier).median),
            "classifier_alone_labelled": "\(labelled)",
            "baseline": "P1 (SDK, gate 0 s / 0 m) interleaved in the same run; target ≤ 1.1×",
        ])
}

/// D1: the diagnostic log's ring buffer under a million events: the database and WAL file
/// sizes after 10k, 100k and 1M entries at the default cap (5,000). Bounded: the sizes stop
/// growing once the cap is reached (SQLite reuses the freed pages).
func d1(dir: URL, total: Int = 1_000_000) async throws -> [String] {
    let path = dir.appendingPathComponent("d1.sqlite").path
    removeDatabase(path)
    defer { removeDatabase(path) }
    let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: []), logger: quietLogger))
    try await beekon.configure(BeekonConfig())
    let logger = beekon.diagnosticLogger
    func size() -> Int {
        [path, path + "-wal"].map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) ?? 0 }.reduce(0, +)
    }
    var lines: [String] = []
    let start = ContinuousClock.now
    for i in 1...total {
        logger.info("upload failed, will retry", metadata: ["status": "503", "backoff_seconds": "\(i % 300)", "batch": "\(i)"])
        if i % 1000 == 0 { await beekon.flushDiagnostics() }
        if [10_000, 100_000, total].contains(i) {
            await beekon.flushDiagnostics()
            let kept = try await beekon.diagnosticLog().count
            lines.append("D1 after \(i) events: \(kept) kept, database + WAL \(size() / 1024) KiB")
        }
    }
    lines.append("D1 \(total) events in \(String(format: "%.1f", (ContinuousClock.now - start).seconds)) s")
    return lines
}
