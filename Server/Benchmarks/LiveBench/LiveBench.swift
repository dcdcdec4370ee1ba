import BeekonIngest
import BeekonLoad
import BeekonTesting
import BeekonWire
import Foundation
import Logging
import PostgresTestCluster
import ServiceLifecycle
#if canImport(Glibc)
    import Glibc
#endif

/// Live-stream benchmark (issue 14): (a) commit→event latency p50/p99 at N concurrent SSE
/// viewers on one instance (SQLite) at a steady ingest rate, (b) the same with the viewers
/// split over two instances on one PostgreSQL and uploads alternating between them,
/// (c) backfill events/s of 100,000 events after a reconnect, (d) server RSS per 1,000
/// idle viewers. Usage: `swift run -c release LiveBench [--viewers N] [--batches N] [--backfill N]`.
@main @MainActor
enum Bench {
    nonisolated static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    static func main() async throws {
        let args = CommandLine.arguments
        func option(_ name: String) -> Int? { args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil } }
        let viewers = option("--viewers") ?? 1_000
        let batches = option("--batches") ?? 100
        let backfill = option("--backfill") ?? 100_000
        var limit = rlimit(rlim_cur: 65_536, rlim_max: 65_536)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        var logger = Logger(label: "live-bench")
        logger.logLevel = .error
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("live-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        print("Live stream benchmark: \(viewers) viewers, \(batches) one-fix batches at 20/s, backfill \(backfill) events")
        print(String(repeating: "-", count: 78))

        let sqlite = IngestConfiguration(database: .sqlite(path: dir + "/live.sqlite"), authMode: .off)
        try await withServers([sqlite], logger: logger) { ports in
            let rssBefore = rssKiB(pid: getpid())
            let fleet = try ViewerFleet(port: ports[0], count: viewers, lastEventID: "0")
            // Every stream open and delivering (a warm-up event reached all of them), then idle.
            _ = try upload(ports[0], envelope(fixes: 1, install: ids.next()))
            try await waitUntil { fleet.received >= viewers }
            try await Task.sleep(for: .seconds(1))
            let rssIdle = rssKiB(pid: getpid())
            print(
                String(
                    format: "(d) RSS per 1,000 idle viewers (SQLite, in-process, incl. client sockets): %.1f MiB (%d → %d KiB)",
                    Double(rssIdle - rssBefore) / 1024 * 1000 / Double(viewers), rssBefore, rssIdle))
            let lat = try await measure(ports: ports, fleet: fleet, viewers: viewers, batches: batches)
            print(
                String(
                    format: "(a) commit→event latency, 1 instance (SQLite), %d viewers: p50 %.1f ms, p99 %.1f ms (%d deliveries)",
                    viewers, lat.p50, lat.p99, lat.count))
            fleet.close()
            let rate = try await backfillRate(port: ports[0], events: backfill)
            print(
                String(
                    format: "(c) backfill after reconnect (SQLite): %d events in %.2f s = %.0f events/s", backfill, rate.seconds,
                    rate.perSecond))
        }

        if let binary = ingestBinary() {
            let rss = try await separateServerRSS(binary: binary, dir: dir, viewers: viewers)
            let base = try await separateServerRSS(binary: binary, dir: dir, viewers: viewers, path: "/healthz")
            let perViewer = Double(rss.idle - rss.before) / 1024 * 1000 / Double(viewers)
            let perConnection = Double(base.idle - base.before) / 1024 * 1000 / Double(viewers)
            print(
                String(
                    format:
                        "(d) RSS per 1,000 idle viewers (SQLite, beekon-ingest process alone, viewers in this process): %.1f MiB (%d → %d KiB)",
                    perViewer, rss.before, rss.idle))
            print(
                String(
                    format:
                        "    baseline, the same server with 1,000 idle keep-alive connections (GET /healthz answered): %.1f MiB; ratio %.2f×",
                    perConnection, perViewer / perConnection))
        } else {
            print("(d) beekon-ingest alone: skipped (no beekon-ingest beside this binary; set BEEKON_INGEST_BINARY)")
        }

        let cluster = try PostgresCluster.start(fsync: true)
        defer { cluster.stop() }
        let name = try cluster.createDatabase()
        let pg = IngestConfiguration(database: try DatabaseLocation(parsing: cluster.url(name)), authMode: .off)
        try await withServers([pg, pg], logger: logger) { ports in
            let half = viewers / 2
            let a = try ViewerFleet(port: ports[0], count: half, lastEventID: "0")
            let b = try ViewerFleet(port: ports[1], count: viewers - half, lastEventID: "0")
            let lat = try await measure(ports: ports, fleets: [a, b], viewers: viewers, batches: batches)
            print(
                String(
                    format:
                        "(b) commit→event latency, 2 instances on PostgreSQL, %d viewers split, uploads alternating: p50 %.1f ms, p99 %.1f ms (%d deliveries)",
                    viewers, lat.p50, lat.p99, lat.count))
            a.close()
            b.close()
            let rate = try await backfillRate(port: ports[1], events: backfill)
            print(
                String(
                    format: "(c) backfill after reconnect (PostgreSQL): %d events in %.2f s = %.0f events/s", backfill, rate.seconds,
                    rate.perSecond))
        }
    }
}
