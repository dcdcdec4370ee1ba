import BeekonChaos
import BeekonWire
import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Ingest {
    /// Issue 5's end-to-end acceptance: the real `beekon` agent replays a recorded track
    /// with sync to a real `beekon-ingest` (SQLite and PostgreSQL); the server's read API
    /// then returns exactly the fixes in the agent's own history — same ids, timestamps,
    /// coordinates and every other field.
    @Suite("Agent end to end: a real beekon against a real beekon-ingest", .tags(.slow), .skippable(.slow)) struct AgentEndToEnd {
        /// The 1 Hz walk from the root package's `Tests/Data`, every fix admitted.
        static let track = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/Data/gpx/togeojson_apple_watch_walk_1hz.gpx")
            .standardizedFileURL.path

        /// A flat JSON object with comparable values: strings as `s:…`, numbers and booleans as `n:…`.
        static func canonical(_ object: [String: Any]) -> [String: String] {
            object.mapValues { value in
                if let s = value as? String { return "s:" + s }
                if let b = value as? Bool, !(value is Int), !(value is Double) { return "n:\(b ? 1.0 : 0.0)" }
                if let n = value as? Int { return "n:\(Double(n))" }
                if let n = value as? Double { return "n:\(n)" }
                if let n = value as? NSNumber { return "n:\(n.doubleValue)" }
                return "?:\(value)"
            }
        }

        @Test(arguments: Backend.all)
        func agentReplayArrivesExactlyAsInTheAgentsHistory(_ backend: Backend) async throws {
            let beekon = try AgentBinary.url()
            try #require(FileManager.default.fileExists(atPath: Self.track), "missing track \(Self.track)")
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-e2e-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let db = dir.appendingPathComponent("agent.sqlite").path

            try await withServer(backend) { server, _ in
                let config = dir.appendingPathComponent("agent.json")
                try Data(
                    """
                    {"minTimeBetweenLocationsSeconds":0,"minDistanceBetweenLocationsMeters":0,
                     "sync":{"url":"\(server.base)/v1/locations","batchSize":100,"syncThreshold":100},
                     "extras":{"fleet":"e2e"}}
                    """.utf8
                ).write(to: config)

                let track = try await Subprocess.run(
                    beekon,
                    [
                        "track", "--source", "replay:\(Self.track)", "--speed", "max",
                        "--db", db, "--config", config.path, "--drain-timeout", "60",
                    ], timeout: .seconds(120))
                #expect(track.status == 0, "beekon track exited \(track.status): \(track.stderr)")
                #expect(track.stdout.contains("uploads complete"), "\(track.stdout.suffix(300))")

                // The agent's view: its history and install id.
                let history = try await Subprocess.run(beekon, ["history", "--db", db, "--format", "ndjson"], timeout: .seconds(60))
                try #require(history.status == 0, "beekon history: \(history.stderr)")
                let mine = try history.stdout.split(separator: "\n").map { line -> [String: Any] in
                    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                }
                #expect(mine.count > 1000, "the walk stores every fix with the gate off")
                let status = try await Subprocess.run(beekon, ["status", "--db", db, "--json"], timeout: .seconds(30))
                let statusJSON = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
                let install = try #require(statusJSON["install_id"] as? String, "no install_id: \(status.stdout)")
                #expect(statusJSON["pending_uploads"] as? Int == 0, "\(statusJSON)")

                // The server's view: every fix of the device, paged.
                var theirs: [[String: Any]] = []
                var cursor: String?
                var pages = 0
                repeat {
                    var url = server.base + "/v1/devices/\(install)/fixes?limit=500"
                    if let cursor {
                        url += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)
                    }
                    let page = try await HTTP.send("GET", url)
                    try #require(page.status == 200, "GET \(url): \(page.status) \(page.text)")
                    let json = try page.json()
                    theirs += try #require(json["fixes"] as? [[String: Any]])
                    cursor = json["next_cursor"] as? String
                    pages += 1
                } while cursor != nil && pages < 100
                #expect(pages >= 4, "\(theirs.count) fixes in \(pages) pages of 500")

                // Exactly the same fixes, in the same (time) order, field for field.
                #expect(theirs.count == mine.count, "server \(theirs.count) fixes, agent \(mine.count)")
                #expect(theirs.compactMap { $0["id"] as? String } == mine.compactMap { $0["id"] as? String }, "ids or order differ")
                var differing: [String] = []
                for (t, m) in zip(theirs, mine) {
                    var server = t
                    server["batch_id"] = nil
                    server["received_at"] = nil
                    // The read API names the device on every fix (issue 31's one renderer); the
                    // agent's history is one device's, so it has no install_id of its own.
                    if server["install_id"] as? String != install { differing.append("install_id \(server["install_id"] ?? "none")") }
                    server["install_id"] = nil
                    if Self.canonical(server) != Self.canonical(m) { differing.append("server \(server)\nagent  \(m)") }
                }
                #expect(differing.isEmpty, "\(differing.count) fixes differ, e.g.\n\(differing.first ?? "")")
                let (lat, lon) = (mine.first?["latitude"] as? Double, mine.first?["longitude"] as? Double)
                #expect(lat == 32.064999 && lon == -81.097216, "the first fix is the track's first point")
            }
        }
    }
}

/// The `beekon` agent binary: `BEEKON_BINARY`, else the root package's `.build/debug/beekon`.
enum AgentBinary {
    static func url() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["BEEKON_BINARY"] {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw TestFailure("BEEKON_BINARY=\(path) is not an executable")
            }
            return URL(fileURLWithPath: path)
        }
        // …/Server/Tests/BeekonIngestTests/this.swift → the root package.
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let binary = root.appendingPathComponent(".build/debug/beekon")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw TestFailure(
                """
                the beekon agent is not built: \(binary.path) is missing. Build the root package first \
                (`swift build` in \(root.path); scripts/test.sh runs the root tests first, which builds it), \
                or set BEEKON_BINARY to the agent's path
                """)
        }
        return binary
    }
}

/// A child process run to completion with its output collected; killed when it overruns
/// (a `ChildProcess` in a directory of its own).
enum Subprocess {
    static func run(_ executable: URL, _ arguments: [String], timeout: Duration) async throws -> ChildProcess.Outcome {
        let dir = try ChaosDir()
        return try await ChildProcess(executable, arguments, dir: dir, name: executable.lastPathComponent).finish(timeout: timeout)
    }
}
