import BeekonChaos
import BeekonIngest
import BeekonWire
import Foundation
import Testing

/// AU-1..9 with real processes: the agent uploads to beekon-ingest with `auth`, access
/// tokens live 4 s so they expire and rotate many times during a real-time replay, the
/// agent is SIGKILLed mid-run and restarted, and every fix is acknowledged. The server
/// rotates refresh tokens and revokes the whole chain when an old one is presented after
/// its successor was used — so a refresh with the seed after the restart, or two refreshes
/// racing with the same token, would turn into invalid_grant and stop the uploads.
@Suite("Auth end to end: rotating tokens, SIGKILL, restart", .tags(.chaos, .slow), .skippable(.chaos, .slow))
struct AuthEndToEndTests {
    @Test func tokensExpiringDuringAReplaySurviveAKillAndEveryFixArrives() async throws {
        let dir = try ChaosDir()
        let database = dir.path("ingest.sqlite")
        let (access, refresh) = try await ChaosBinaries.issueToken(subject: "rotating", database: database, dir: dir)

        // A beekon-ingest process, not an in-process server: that one shared this process's
        // cooperative pool with the CPU-bound fuzz tests beside it, and on a loaded CI run an
        // upload retried right after a successful refresh was refused 401 — most likely the
        // server reached it after the 3 s token had expired (nothing else was wrong: every
        // refresh got 200, and the run passes alone and under CPU load).
        try await ChaosTests.withServerProcess(database: database, extra: ["--auth", "required", "--access-token-ttl", "4"]) { server in
            let proxy = try ChaosProxy(upstreamPort: server.port, decide: { _ in .pass })
            defer { proxy.stop() }
            // Real fixes at 1 Hz, replayed in real time (NDJSON is the agent's own export format).
            // The first run gets 180 s of track so the kill always lands while it is tracking,
            // however slow the machine (a run whose source ended has stopped its session, and a
            // restart would rightly start a new one); the resumed run gets 24 s.
            func writeTrack(_ name: String, fixes: Int) throws -> String {
                let lines = try String(contentsOfFile: ChaosTests.track, encoding: .utf8)
                    .split(separator: "<trkpt").dropFirst().prefix(fixes).enumerated().map { i, chunk -> String in
                        let lat = chunk.split(separator: "lat=\"")[1].prefix { $0 != "\"" }
                        let lon = chunk.split(separator: "lon=\"")[1].prefix { $0 != "\"" }
                        return
                            #"{"timestamp":"\#(WireTimestamp(millis: 1_767_225_600_000 + Int64(i) * 1000))","latitude":\#(lat),"longitude":\#(lon)}"#
                    }
                let path = dir.path(name)
                try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }
            let longTrack = try writeTrack("long.ndjson", fixes: 180)
            let shortTrack = try writeTrack("short.ndjson", fixes: 24)
            let tokenURL = "http://127.0.0.1:\(proxy.port)/oauth/token"
            let auth =
                #","auth":{"accessToken":"\#(access)","refreshToken":"\#(refresh)","expiresAt":1,"skewMarginSeconds":1,"refreshUrl":"\#(tokenURL)","refreshPayload":{"grant_type":"refresh_token","refresh_token":"{refreshToken}"}}"#
            let agentDir = try ChaosDir()
            let agent = try ChaosAgent(dir: agentDir, url: "", extraConfig: auth)
            try agent.writeConfig(url: proxy.url, batchSize: 2)
            func args(_ track: String) -> [String] {
                [
                    "track", "--log-level", "info", "--source", "replay:\(track)", "--speed", "1", "--rebase", "--db", agent.db,
                    "--config", agent.config, "--drain-timeout", "45",
                ]
            }

            let first = try ChildProcess(agent.binary, args(longTrack), dir: agentDir, name: "track")
            try await proxy.waitFor("three refreshes and three uploads", timeout: .seconds(60)) { log in
                log.filter { $0.path == "/oauth/token" && $0.upstreamStatus == 200 }.count >= 3
                    && log.filter { $0.path == "/v1/locations" && $0.upstreamStatus == 200 }.count >= 3
            }
            first.kill()
            let killed = try await first.finish(timeout: .seconds(60))
            try #require(
                killed.signalled && !killed.stdout.contains("source ended"),
                "the kill landed while the first run was tracking: \(killed.stdout.suffix(800))")
            let second = try await ChildProcess(agent.binary, args(shortTrack), dir: agentDir, name: "track").finish(timeout: .seconds(240))
            #expect(second.status == 0 && !second.signalled, "exit \(second.status): \(second.stderr.suffix(6000))\n\(proxy.summary)")
            #expect(second.stdout.contains("uploads complete"), "\(second.stdout.suffix(800))")
            #expect(second.sessions == killed.sessions, "the same session resumed")

            let refreshes = proxy.log.filter { $0.path == "/oauth/token" }
            #expect(refreshes.count >= 5, "tokens expiring every 4 s over > 30 s: \(refreshes.count) refreshes")
            #expect(
                refreshes.allSatisfy { $0.upstreamStatus == 200 },
                "no refresh was rejected (no seed reuse after the restart, no racing refreshes):\n\(proxy.summary)")
            let uploads = proxy.log.filter { $0.path == "/v1/locations" }
            #expect(!uploads.contains { $0.upstreamStatus == 401 } || uploads.last?.upstreamStatus == 200)
            let status = try await agent.run(["status", "--db", agent.db, "--json"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(report["pending_uploads"] as? Int == 0, "every stored fix was acknowledged: \(status.stdout)")
            #expect((report["locations"] as? Int ?? 0) >= 20)
        }
    }
}
