// Beekon benchmarks (issue 2): P1 per-fix cost and P5 history query, each against a raw
// GRDB baseline measured in the same run; (issue 3, SyncBench.swift) P2 upload bytes per
// fix and P3 drain throughput, against uncompressed JSON and a raw URLSession client.
//
// Run (release, from the package root):
//     swift run -c release BeekonBench [--runs N] [--json results.json] [--dir DIR]
//
// P1  raw fix → gate → durable store → emitted on `positions`, through the real `Beekon`
//     actor (gate 0 s / 0 m so every fix is stored) on a temporary on-disk database,
//     versus a raw GRDB per-row insert of the same rows into a table of the same shape
//     (schema copied from the SDK's own database), one transaction per row, WAL,
//     PRAGMA synchronous = FULL — the settings of Sources/Beekon/Store/LocationStore.swift.
// P5  `history(from:to:)` of one day out of 100,000 rows spread over 10 days, versus the
//     same SQL query (`ts BETWEEN ? AND ? ORDER BY ts, rowid`) decoded into plain records
//     with GRDB on the same file.
//
// Each figure is the median of `--runs` runs (default 7, at least 5) with min–max; the
// ratio is ours / baseline (1.0 = no overhead). `--tiny` (issue 31) runs every row at tiny
// sizes (and allows `--runs 1`): a smoke check that each row is still produced
// (scripts/bench-smoke.sh), not a measurement. Databases go to `--dir` (default: the
// temporary directory) — put it on the disk you care about: fsync cost dominates P1.

import BeekonWire
import Beekon
import BeekonSources
import Foundation
import GRDB

// MARK: - Measurement helpers

struct Stats: Codable {
    var median: Double
    var min: Double
    var max: Double
    var samples: [Double]

    init(_ samples: [Double]) {
        let s = samples.sorted()
        self.samples = samples
        median = s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        min = s.first ?? .nan
        max = s.last ?? .nan
    }
}

struct Comparison: Codable {
    var id: String
    var what: String
    var unit: String
    var ours: Stats
    var baseline: Stats
    var ratio: Double
    var details: [String: String]
}

func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return (clock.now - start).seconds
}

/// User plus system CPU seconds this process has used so far, all threads (`getrusage`).
func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)  // Glibc imports RUSAGE_SELF as an enum case
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Wall seconds of `body` (as `measure`) and the CPU seconds this process spent meanwhile.
func measureWithCPU(_ body: () async throws -> Void) async rethrows -> (wall: Double, cpu: Double) {
    let cpu = processCPUSeconds()
    let wall = try await measure(body)
    return (wall, processCPUSeconds() - cpu)
}

struct BenchError: Error, CustomStringConvertible { var description: String }

/// `--tiny`: every row at a tiny size, to check it still runs (scripts/bench-smoke.sh).
let tinySizes = CommandLine.arguments.contains("--tiny")

/// `full` normally, `tiny` under `--tiny`.
func size(_ full: Int, tiny: Int) -> Int { tinySizes ? tiny : full }

/// A location source that hands over a fixed list of fixes as fast as they are consumed.
struct ArrayProvider: LocationProvider {
    let fixes: [RawFix]
    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        let (stream, continuation) = AsyncThrowingStream<RawFix, any Error>.makeStream()
        for f in fixes { continuation.yield(f) }
        continuation.finish()
        return stream
    }
    func setPowerMode(_ mode: PowerMode) async {}
    func stop() async {}
}

/// Same-shape schema: the DDL of the SDK's `location` table and its indexes, read from a
/// database the SDK created (so the baseline follows schema migrations automatically).
func locationDDL(fromSDKDatabaseAt path: String) throws -> [String] {
    let queue = try DatabaseQueue(path: path)
    return try queue.read { db in
        try String.fetchAll(
            db,
            sql: """
                SELECT sql FROM sqlite_master
                WHERE tbl_name = 'location' AND sql IS NOT NULL
                ORDER BY type = 'table' DESC, name
                """)
    }
}

/// The connection settings of the SDK's store: WAL pool, synchronous FULL, 5 s busy timeout.
func rawPool(_ path: String) throws -> DatabasePool {
    var config = Configuration()
    config.busyMode = .timeout(5)
    config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(path: path, configuration: config)
    // GRDB's pool resets its writer to NORMAL after `prepareDatabase` (its WAL set-up): without
    // this the baseline would commit with no fsync. Read back on the writer, as the SDK's is.
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let level = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    guard level == 2 else { throw BenchError(description: "the baseline's writer is at synchronous \(level ?? -1), not FULL (2)") }
    return pool
}

let insertSQL = """
    INSERT INTO location (id, session_id, ts, latitude, longitude, accuracy, speed, bearing, altitude,
                          trigger, motion, is_mock, activity, quality)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    """

func arguments(_ l: Location) -> StatementArguments {
    [
        l.id.wireString, l.sessionId.wireString, Int64((l.timestamp.timeIntervalSince1970 * 1000).rounded()),
        l.latitude, l.longitude, l.accuracy, l.speed, l.bearing, l.altitude,
        l.trigger.rawValue, l.motion.rawValue, l.isMock, l.activity?.rawValue, l.quality?.rawValue,
    ]
}

/// A plain record for the raw P5 query: every column decoded, nothing else.
struct RawLocationRow: FetchableRecord {
    var id: String, sessionID: String, ts: Int64, latitude: Double, longitude: Double
    var accuracy: Double?, speed: Double?, bearing: Double?, altitude: Double?
    var trigger: String, motion: String, isMock: Bool, activity: String?, quality: String?

    init(row: Row) {
        id = row["id"]
        sessionID = row["session_id"]
        ts = row["ts"]
        latitude = row["latitude"]
        longitude = row["longitude"]
        accuracy = row["accuracy"]
        speed = row["speed"]
        bearing = row["bearing"]
        altitude = row["altitude"]
        trigger = row["trigger"]
        motion = row["motion"]
        isMock = row["is_mock"]
        activity = row["activity"]
        quality = row["quality"]
    }
}

func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

// MARK: - Input fixes

/// The real 1 Hz walk (Tests/Data) with time order fixed and duplicates dropped, shifted
/// to end an hour ago; a synthetic 1 Hz walk of the same length when the file is missing.
func benchFixes() -> (fixes: [RawFix], source: String) {
    let walk = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("../../Tests/Data/gpx/togeojson_apple_watch_walk_1hz.gpx")
        .standardizedFileURL
    var fixes: [RawFix]
    var source = walk.lastPathComponent
    if let read = try? TrackFile.read(contentsOf: walk) {
        fixes = read.fixes
    } else {
        source = "synthetic 1 Hz walk"
        fixes = (0..<1_852).map { i in
            RawFix(
                timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(i)),
                latitude: 32.065 - Double(i) * 1e-5, longitude: -81.097 + Double(i) * 1.2e-5,
                accuracy: 3, speed: 1.4, bearing: 120, altitude: 15)
        }
    }
    fixes.sort { $0.timestamp < $1.timestamp }
    var unique: [RawFix] = []
    for f in fixes where unique.last.map({ f.timestamp > $0.timestamp }) ?? true { unique.append(f) }
    let shift = Date().addingTimeInterval(-3600).timeIntervalSince(unique.last!.timestamp)
    return (
        unique.map {
            var f = $0
            f.timestamp += shift
            return f
        }, source
    )
}

// MARK: - P1

/// One SDK run over `fixes` with `config` on a fresh database at `path`, timed from `start()`
/// until every fix is emitted on `positions`: seconds per fix, and what `inspect` reads from
/// the stopped SDK before the database is removed.
func sdkPerFix<T>(
    _ fixes: [RawFix], config: BeekonConfig, path: String, label: String, inspect: (Beekon) async throws -> T
) async throws -> (secondsPerFix: Double, inspected: T) {
    removeDatabase(path)
    defer { removeDatabase(path) }
    let n = fixes.count
    let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: fixes), logger: quietLogger))
    try await beekon.configure(config)
    let stream = beekon.positions
    let consumer = Task { () -> Int in
        var seen = 0
        for await _ in stream {
            seen += 1
            if seen == n { break }
        }
        return seen
    }
    let t = try await measure {
        try await beekon.start()
        let seen = await consumer.value
        guard seen == n else { throw BenchError(description: "\(label): \(seen) of \(n) fixes emitted") }
    }
    try await beekon.stop()
    return (t / Double(n), try await inspect(beekon))
}

func p1(runs: Int, dir: URL) async throws -> [Comparison] {
    let (all, source) = benchFixes()
    let fixes = Array(all.prefix(size(all.count, tiny: 200)))
    let n = fixes.count
    var ours: [Double] = []
    var raw: [Double] = []
    var deviation: [Double] = []
    var deviationStored = 0
    var rows: [Location] = []
    var ddl: [String] = []

    for run in 0...runs {  // run 0 warms up and is not counted
        // Ours: the SDK actor end to end.
        let path = dir.appendingPathComponent("p1-sdk-\(run).sqlite").path
        let (perFix, firstRun) = try await sdkPerFix(
            fixes, config: BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0), path: path, label: "P1"
        ) { beekon -> (rows: [Location], ddl: [String])? in
            let stats = await beekon.statistics
            guard stats.stored == n else { throw BenchError(description: "P1: stored \(stats.stored) of \(n)") }
            guard run == 0 else { return nil }
            return (try await beekon.history(from: .distantPast, to: .distantFuture), try locationDDL(fromSDKDatabaseAt: path))
        }
        if let firstRun {
            rows = firstRun.rows
            ddl = firstRun.ddl
        } else {
            ours.append(perFix)
        }

        // The same fixes with error-bounded admission at 25 m (BY-9): per raw fix, until the
        // source ended and stop() stored the held fix.
        let devPath = dir.appendingPathComponent("p1-dev-\(run).sqlite").path
        removeDatabase(devPath)
        let dev = Beekon(
            dependencies: BeekonDependencies(databasePath: devPath, provider: ArrayProvider(fixes: fixes), logger: quietLogger))
        try await dev.configure(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 25))
        let td = try await measure {
            try await dev.start()
            await dev.waitUntilSourceEnds()
            try await dev.stop()
        }
        deviationStored = await dev.statistics.stored
        if run > 0 { deviation.append(td / Double(n)) }
        removeDatabase(devPath)

        // Baseline: the same rows, one INSERT per transaction, same table shape and pragmas.
        let rawPath = dir.appendingPathComponent("p1-raw-\(run).sqlite").path
        removeDatabase(rawPath)
        let pool = try rawPool(rawPath)
        let statements = ddl
        try await pool.write { db in for statement in statements { try db.execute(sql: statement) } }
        let tr = try await measure {
            for row in rows {
                let args = arguments(row)
                try await pool.write { db in try db.execute(sql: insertSQL, arguments: args) }
            }
        }
        let count = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location") ?? 0 }
        guard count == n else { throw BenchError(description: "P1 baseline: \(count) of \(n) rows") }
        if run > 0 { raw.append(tr / Double(n)) }
        try pool.close()
        removeDatabase(rawPath)
    }
    let o = Stats(ours.map { $0 * 1e6 })
    let b = Stats(raw.map { $0 * 1e6 })
    let d = Stats(deviation.map { $0 * 1e6 })
    let withDeviation = Comparison(
        id: "P1-dev25", what: "P1 with maxDeviationMeters 25 vs P1 without, per raw fix", unit: "µs/fix",
        ours: d, baseline: o, ratio: d.median / o.median,
        details: [
            "fixes_per_run": "\(n)", "stored": "\(deviationStored)", "source": source,
            "baseline": "P1 (gate 0 s / 0 m, every fix stored) in the same run",
        ])
    return [
        Comparison(
            id: "P1", what: "raw fix → gate → durable store → emitted on positions, per fix", unit: "µs/fix",
            ours: o, baseline: b, ratio: o.median / b.median,
            details: [
                "fixes_per_run": "\(n)", "source": source, "gate": "0 s / 0 m",
                "baseline": "GRDB DatabasePool.write per row (one transaction each), WAL, synchronous=FULL read back on the writer",
                "durability": "both arms: an fsync of the WAL per fix (writer at synchronous=FULL, checked)",
            ]),
        withDeviation,
    ]
}

// MARK: - P5

func p5(runs: Int, dir: URL) async throws -> Comparison {
    let path = dir.appendingPathComponent("p5.sqlite").path
    removeDatabase(path)
    defer { removeDatabase(path) }
    let total = size(100_000, tiny: 2_000)
    let days = 10
    let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z
    let step = Double(days * 86_400) / Double(total)  // 8.64 s between fixes

    // The SDK creates and migrates the file; rows go in with one bulk transaction.
    let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: []), logger: quietLogger))
    _ = try await beekon.storeReport()
    let pool = try rawPool(path)
    let ids = UUIDv7Generator()
    let session = ids.next()
    try await pool.write { db in
        let statement = try db.makeStatement(sql: insertSQL)
        for i in 0..<total {
            let t = start.addingTimeInterval(Double(i) * step)
            let l = Location(
                id: ids.next(), sessionId: session, timestamp: t,
                latitude: 45.27 + sin(Double(i) / 500) * 0.01, longitude: 13.71 + cos(Double(i) / 500) * 0.01,
                accuracy: 4.5, speed: 1.3, bearing: Double(i % 360), altitude: 260 + Double(i % 20),
                trigger: .interval, motion: .moving)
            try statement.execute(arguments: arguments(l))
        }
    }
    let report = try await beekon.storeReport()
    guard report.locationCount == total else { throw BenchError(description: "P5: \(report.locationCount) rows") }

    let dayStart = start.addingTimeInterval(4 * 86_400)  // 2026-01-05
    let dayEnd = dayStart.addingTimeInterval(86_400 - 0.001)  // inclusive bound, last ms of the day
    let lo = Int64((dayStart.timeIntervalSince1970 * 1000).rounded())
    let hi = Int64((dayEnd.timeIntervalSince1970 * 1000).rounded())
    let sql = "SELECT * FROM location WHERE ts BETWEEN ? AND ? ORDER BY ts, rowid"

    var ours: [Double] = []
    var raw: [Double] = []
    var oursCount = 0
    var rawCount = 0
    for run in 0...runs {  // run 0 warms caches for both and is not counted
        let t = try await measure { oursCount = try await beekon.history(from: dayStart, to: dayEnd).count }
        let tr = try await measure {
            rawCount = try await pool.read { db in try RawLocationRow.fetchAll(db, sql: sql, arguments: [lo, hi]).count }
        }
        if run > 0 {
            ours.append(t)
            raw.append(tr)
        }
    }
    guard oursCount == rawCount, oursCount > 0 else {
        throw BenchError(description: "P5: history returned \(oursCount) rows, the raw query \(rawCount)")
    }
    try pool.close()
    let o = Stats(ours.map { $0 * 1e3 })
    let b = Stats(raw.map { $0 * 1e3 })
    return Comparison(
        id: "P5", what: "history(from:to:) of one day out of \(total) rows over 10 days", unit: "ms",
        ours: o, baseline: b, ratio: o.median / b.median,
        details: [
            "rows_total": "\(total)", "rows_returned": "\(oursCount)",
            "baseline": "GRDB pool.read: same SQL, rows decoded into a plain FetchableRecord",
        ])
}

// MARK: - Main

enum BeekonBench {
    static func main() async {
        do { try await run() } catch {
            FileHandle.standardError.write(Data("BeekonBench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        var args = Array(CommandLine.arguments.dropFirst())
        var runs = 7
        var jsonPath: String?
        var only: Set<String>?
        var dir = FileManager.default.temporaryDirectory
        while !args.isEmpty {
            let a = args.removeFirst()
            switch a {
            case "--tiny":
                break  // read as `tinySizes`
            case "--runs":
                guard let v = args.first.flatMap(Int.init), v >= (tinySizes ? 1 : 5) else {
                    throw BenchError(description: "--runs needs a number ≥ 5 (≥ 1 with --tiny)")
                }
                runs = v
                args.removeFirst()
            case "--json":
                guard let v = args.first else { throw BenchError(description: "--json needs a path") }
                jsonPath = v
                args.removeFirst()
            case "--dir":
                guard let v = args.first else { throw BenchError(description: "--dir needs a path") }
                dir = URL(fileURLWithPath: v)
                args.removeFirst()
            case "--only":
                let known: Set<String> = ["P1", "P2", "P3", "P5", "P6", "P8", "W1", "D1", "B1"]
                guard let v = args.first else { throw BenchError(description: "--only needs a list, e.g. P6 or P1,P6") }
                let ids = Set(v.split(separator: ",").map { $0.uppercased() })
                guard !ids.isEmpty, ids.isSubset(of: known) else {
                    throw BenchError(description: "--only takes some of P1,P2,P3,P5,P6,P8,W1,D1,B1")
                }
                only = ids
                args.removeFirst()
            case "-h", "--help":
                print(
                    "usage: swift run -c release BeekonBench [--runs N≥5] [--json PATH] [--dir DIR] [--only P1,P2,P3,P5,P6,P8,W1,D1,B1] [--tiny]"
                )
                return
            default:
                throw BenchError(description: "unknown argument \(a)")
            }
        }
        let work = dir.appendingPathComponent("beekon-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }

        #if DEBUG
            print("warning: debug build; use `swift run -c release BeekonBench` for real figures")
        #endif
        print("Beekon benchmarks — \(runs) runs each (+1 warm-up), databases in \(work.path)\(tinySizes ? ", TINY sizes (smoke)" : "")")
        func wanted(_ id: String) -> Bool { only?.contains(id) ?? true }
        var results: [Comparison] = []
        // P1-pipeline: PipelineBench.swift
        if wanted("P1") { results += try await p1(runs: runs, dir: work) + [try await p1Pipeline(runs: runs, dir: work)] }
        if wanted("P5") { results.append(try await p5(runs: runs, dir: work)) }
        if wanted("P2") { results += try await p2(dir: work) }  // SyncBench.swift
        if wanted("P3") { results += try await p3(runs: runs, dir: work) }
        if wanted("W1") { results.append(try await w1(runs: runs)) }  // WireBench.swift
        if wanted("P6") { results += p6(runs: runs) + p6Paging(runs: runs) }  // GeofenceBench.swift, RegionPagerBench.swift
        if wanted("P8") { results += try p8(runs: runs) }  // BeaconBench.swift
        if wanted("B1") { results += b1() }  // BatteryBench.swift

        func f(_ v: Double) -> String {
            v >= 100 ? String(format: "%.0f", v) : v >= 10 ? String(format: "%.1f", v) : String(format: "%.2f", v)
        }
        let header = ["", "unit", "ours median (min–max)", "baseline median (min–max)", "ratio"]
        let table =
            [header]
            + results.map { r in
                [
                    r.id, r.unit, "\(f(r.ours.median)) (\(f(r.ours.min))–\(f(r.ours.max)))",
                    "\(f(r.baseline.median)) (\(f(r.baseline.min))–\(f(r.baseline.max)))", String(format: "%.2f×", r.ratio),
                ]
            }
        let widths = header.indices.map { i in table.map { $0[i].count }.max()! }
        for (n, row) in table.enumerated() {
            print(
                row.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                    .joined(separator: "  "))
            if n == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        if wanted("D1") { for line in try await d1(dir: work, total: size(1_000_000, tiny: 2_000)) { print(line) } }  // PipelineBench.swift
        for r in results {
            print("\(r.id): \(r.what); " + r.details.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))
        }

        if let jsonPath {
            struct Output: Codable {
                var date: String
                var runs: Int
                var host: String
                var results: [Comparison]
            }
            let out = Output(
                date: ISO8601DateFormatter().string(from: Date()), runs: runs,
                host: ProcessInfo.processInfo.hostName, results: results)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(out).write(to: URL(fileURLWithPath: jsonPath))
            print("results written to \(jsonPath)")
        }
    }
}

await BeekonBench.main()
