import BeekonIngest
import BeekonWire
import Foundation
import PostgresTestCluster
import GRDB
import Logging
import PostgresNIO

/// P4: fixes/s stored with dedupe (the server's own `LocationStore.ingest`)
/// vs. a plain COPY of the same rows (PostgreSQL) and plain INSERTs (SQLite),
/// in the same run. Usage: `swift run -c release IngestBench [--fixes N] [--clients C]
/// [--postgres postgres://…] [--at-rest N]`; without --postgres it starts a throw-away cluster.
/// `--at-rest N` instead reports the bytes on disk per stored fix in each store (see `AtRest`).
@main
struct IngestBench {
    static func main() async throws {
        let args = CommandLine.arguments
        func option(_ name: String) -> String? { args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
        let total = option("--fixes").flatMap(Int.init) ?? 100_000
        let clients = option("--clients").flatMap(Int.init) ?? 4
        var logger = Logger(label: "ingest-bench")
        logger.logLevel = .error
        var cluster: PostgresCluster?
        let pgURL: String
        if let url = option("--postgres") {
            pgURL = url
        } else {
            let c = try PostgresCluster.start(fsync: true)
            cluster = c
            pgURL = c.url("postgres")
        }
        defer { cluster?.stop() }
        if let n = option("--at-rest").flatMap(Int.init) {
            print("Bytes at rest per stored fix: \(n) fixes, 100-fix uploads from 10 devices")
            AtRest.report("SQLite (WAL checkpointed and truncated)", fixes: n, try await AtRest.sqlite(fixes: n, logger: logger))
            AtRest.report(
                "PostgreSQL (database size over an empty migrated one, after VACUUM)", fixes: n,
                try await AtRest.postgres(url: pgURL, cluster: cluster, fixes: n, logger: logger))
            return
        }
        print("P4 ingest benchmark: \(total) fixes per run, \(clients) concurrent clients")
        print(String(repeating: "-", count: 78))
        for batchSize in [100, 1000] {
            let batches = Workload.batches(total: total, batchSize: batchSize)
            let rows = batches.reduce(0) { $0 + $1.locations.count }
            // PostgreSQL: dedupe path vs COPY into an identical table, fresh database for each.
            let dedupe = try await Runner.postgresIngest(url: pgURL, cluster: cluster, batches: batches, clients: clients, logger: logger)
            let replay = dedupe.replay
            let copy = try await Runner.postgresCopy(url: pgURL, cluster: cluster, batches: batches, clients: clients, logger: logger)
            report(
                "PostgreSQL batch=\(batchSize)", rows,
                [
                    ("ingest+dedupe", dedupe.seconds), ("replay (all dup)", replay),
                    ("plain COPY", copy),
                ], baseline: "plain COPY")
            let sqlite = try await Runner.sqliteIngest(batches: batches, clients: clients, logger: logger)
            let raw = try Runner.sqliteRaw(batches: batches)
            report("SQLite batch=\(batchSize)", rows, [("ingest+dedupe", sqlite), ("raw INSERT", raw)], baseline: "raw INSERT")
        }
    }

    static func report(_ title: String, _ rows: Int, _ results: [(String, Double)], baseline: String) {
        let base = results.first { $0.0 == baseline }!.1
        print(title)
        for (name, seconds) in results {
            let rate = Double(rows) / seconds
            let ratio = base / seconds
            print(
                "  \(name.padding(toLength: 18, withPad: " ", startingAt: 0)) \(String(format: "%9.0f", rate)) fixes/s  \(String(format: "%6.3f", seconds)) s  ratio vs \(baseline): \(String(format: "%.2f", ratio))"
            )
        }
    }
}

/// Deterministic envelopes: `total` fixes in batches, one session per device, 10 devices.
enum Workload {
    static func batches(total: Int, batchSize: Int) -> [WireEnvelope] {
        let ids = UUIDv7Generator()
        let devices = (0..<10).map { _ in (ids.next(), ids.next()) }
        var out: [WireEnvelope] = []
        var made = 0
        var t: Int64 = 1_781_500_000_000
        while made < total {
            let (install, session) = devices[out.count % devices.count]
            let n = min(batchSize, total - made)
            let locations = (0..<n).map { i -> WireLocation in
                t += 1000
                return WireLocation(
                    id: ids.next(), timestamp: WireTimestamp(millis: t), trigger: .interval, motion: .moving,
                    latitude: 52.5 + Double(i) * 1e-4, longitude: 13.4 + Double(i) * 1e-4, accuracy: 4.5,
                    speed: 1.2, bearing: 181.5, altitude: 35, activity: .walking)
            }
            out.append(
                WireEnvelope(
                    batchId: ids.next(), sessionId: session, sentAt: WireTimestamp(millis: t),
                    device: WireDevice(installId: install, platform: "linux", sdkVersion: "bench"),
                    locations: locations))
            made += n
        }
        return out
    }
}
