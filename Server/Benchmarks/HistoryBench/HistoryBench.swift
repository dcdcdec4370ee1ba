import BeekonIngest
import BeekonWire
import Foundation
import Logging
import PostgresTestCluster

/// Time to first render of a 30-day, 1 Hz device history (issue 15; target < 1 s and
/// < 1 MB): seeds `--fixes` fixes of one device over `--days` days through the server's own
/// store (the overview tier marked at ingest and rebuilt as the server's background
/// maintainer does), starts the real `beekon-ingest` on that database, and measures in the
/// same run (a) the history request the dashboard makes for its first render and (b) the
/// raw track, with curl (time, bytes), and (c) the page's own first render in headless
/// chromium (`scripts/page_render.py`, when chromium is installed).
///
/// Usage: `HistoryBench [--fixes 2592000] [--days 30] [--backend sqlite|postgres|both] [--runs 5]`.
@main
enum Bench {
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// The dashboard's map canvas in a 1200×800 window (what its first request asks to fit).
    static let view = (width: 807, height: 677)

    static func main() async throws {
        let args = CommandLine.arguments
        func option(_ name: String) -> String? { args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
        let fixes = option("--fixes").flatMap(Int.init) ?? 2_592_000
        let days = option("--days").flatMap(Int.init) ?? 30
        let runs = option("--runs").flatMap(Int.init) ?? 5
        let backend = option("--backend") ?? "sqlite"
        var logger = Logger(label: "history-bench")
        logger.logLevel = .error
        guard let binary = ingestBinary() else { throw BenchFailure("no beekon-ingest binary (set BEEKON_INGEST_BINARY)") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("history-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
        let span = Int64(days) * 86_400_000
        let seeder = Seeder(install: UUIDv7Generator().next(), start: nowMs - span, fixes: fixes, stepMillis: span / Int64(fixes))
        print("History benchmark: \(fixes) fixes of one device over \(days) days (one every \(seeder.stepMillis) ms), \(runs) runs")
        print(String(repeating: "-", count: 78))
        var cluster: PostgresCluster?
        defer { cluster?.stop() }
        var locations: [(String, String)] = []
        if backend == "sqlite" || backend == "both" { locations.append(("SQLite", "sqlite:\(dir)/history.sqlite")) }
        if backend == "postgres" || backend == "both" {
            let c = try PostgresCluster.start(fsync: false)
            cluster = c
            locations.append(("PostgreSQL", c.url(try c.createDatabase())))
        }
        for (name, url) in locations {
            let config = IngestConfiguration(database: try DatabaseLocation(parsing: url))
            let store = try IngestServer.makeStore(config, logger: logger)
            try await IngestServer.withServices(store.services, logger: logger) {
                try await store.migrate()
                let seeded = try await seeder.seed(into: store)
                let began = now()
                var buckets = 0
                while case let n = try await store.history.rebuildOverview(limit: 64), n > 0 { buckets += n }
                let rebuild = now() - began
                print(
                    String(
                        format:
                            "%@: seeded %d fixes in %.1f s (%.0f fixes/s through LocationStore.ingest); tier rebuilt: %d buckets in %.1f s (%.0f fixes/s)",
                        name, fixes, seeded, Double(fixes) / seeded, buckets, rebuild, Double(fixes) / rebuild))
            }
            try await measure(name: name, binary: binary, database: url, from: seeder.start - 1, install: seeder.install, runs: runs)
        }
    }

    /// Starts `beekon-ingest` on `database` and measures the dashboard's request, the raw track and the page.
    static func measure(name: String, binary: String, database: String, from: Int64, install: UUID, runs: Int) async throws {
        let server = try ServerProcess(binary: binary, database: database)
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let window = "from=\(WireTimestamp(millis: from).description)"
        let path = "\(base)/v1/devices/\(install.wireString)/history?\(window)"
        let fitted = "\(path)&fit=\(view.width)x\(view.height)"
        var first: [Curl.Result] = []
        var raw: [Curl.Result] = []
        for _ in 0..<runs {
            first.append(try Curl.get(fitted))
            raw.append(try Curl.get(path))
        }
        let body = try Curl.body(fitted)
        let sample = (try JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
        let f = Curl.summary(first)
        let r = Curl.summary(raw)
        print(
            "\(name): (a) first-render request `history?from=…&fit=\(view.width)x\(view.height)` (source \(sample["source"] ?? "?"), zoom \(sample["zoom"] ?? "?"), tier level \(sample["level"] ?? "?"), \(sample["count"] ?? "?") of \(sample["raw_count"] ?? "?") points, bound \(sample["tolerance_m"] ?? "?") m)"
        )
        print(
            String(
                format:
                    "    time %.3f s median (%.3f–%.3f; first %.3f), %.2f MB  |  (b) raw track: %.3f s median (%.3f–%.3f), %.1f MB  |  ratio: %.0f× faster, %.0f× fewer bytes",
                f.median, f.min, f.max, first[0].seconds, f.megabytes, r.median, r.min, r.max, r.megabytes, r.median / f.median,
                r.megabytes / f.megabytes))
        if let page = try? pageRender(base: base, runs: 3) {
            print("\(name): (c) page first render in headless chromium (\(view.width)×\(view.height) map): \(page)")
        }
    }

    /// `python3 scripts/page_render.py URL` (the dashboard with a 30-day window), if chromium and the script are there.
    static func pageRender(base: String, runs: Int) throws -> String? {
        let script = ProcessInfo.processInfo.environment["BEEKON_PAGE_RENDER"] ?? "scripts/page_render.py"
        guard FileManager.default.fileExists(atPath: script), FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            return nil
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, "--runs", "\(runs)", "\(base)/?days=30"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The `beekon-ingest` binary: `BEEKON_INGEST_BINARY`, else the one built beside this benchmark.
    static func ingestBinary() -> String? {
        if let path = ProcessInfo.processInfo.environment["BEEKON_INGEST_BINARY"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("beekon-ingest").path
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : nil
    }
}

/// A benchmark that cannot run.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
