import BeekonChaos
import BeekonLoad
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

extension Bench {
    /// The `beekon-ingest` binary for the separate-process measurement: `BEEKON_INGEST_BINARY`,
    /// else the one built beside this benchmark.
    static func ingestBinary() -> String? {
        if let path = ProcessInfo.processInfo.environment["BEEKON_INGEST_BINARY"] { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("beekon-ingest").path
        return FileManager.default.isExecutableFile(atPath: beside) ? beside : nil
    }

    /// (d) measured on the server alone: a real `beekon-ingest` process (SQLite, auth off) with
    /// `viewers` idle SSE streams opened from this process; the server's VmRSS before the
    /// streams and once every stream has delivered a warm-up event and gone idle. With
    /// `path` other than `/v1/live` (the baseline: `/healthz`), the connections are plain
    /// keep-alive connections that got their answer and wait for the next request.
    static func separateServerRSS(binary: String, dir: String, viewers: Int, path: String = "/v1/live") async throws -> (
        before: Int, idle: Int
    ) {
        let server = try await ServerProcess.start(
            binary: URL(fileURLWithPath: binary), database: "sqlite:" + dir + "/rss-\(path.count).sqlite", directory: dir,
            extra: ["--auth", "off"])
        defer { server.terminate() }
        let port = server.port
        // One upload and one stream first, so lazily built state (store, router, hub) is in the baseline.
        _ = try upload(port, envelope(fixes: 1, install: ids.next()))
        let probe = try ViewerFleet(port: port, count: 1, lastEventID: "0")
        try await waitUntil { probe.received >= 1 }
        probe.close()
        try await Task.sleep(for: .seconds(1))
        let before = rssKiB(pid: server.pid)
        // Every stream resumes from 0, so each is known to be open once it has the stored fix.
        let fleet = try ViewerFleet(port: port, count: viewers, path: path, lastEventID: "0")
        defer { fleet.close() }
        if path == "/v1/live" {
            try await waitUntil { fleet.received >= viewers }
        } else {
            try await waitUntil { fleet.answered >= viewers }
        }
        try await Task.sleep(for: .seconds(2))
        return (before, rssKiB(pid: server.pid))
    }

    /// Resident set size of process `pid`, KiB.
    static func rssKiB(pid: Int32) -> Int { ViewerFleet.rssKiB(pid: pid) }
}
