import BeekonChaos
import BeekonWire
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension Ingest {
    /// Issue 15's end-to-end acceptance (BY-2): a real `beekon track` (replay at real speed,
    /// sync on) answers locate requests through the command channel with a `manual` fix
    /// carrying the request id; a device with sharing off answers `refused` (`beekon locate`).
    /// Latencies are printed (p50/p99), never asserted: the figures are in BENCHMARKS.md.
    @Suite(.tags(.slow), .skippable(.slow)) struct LocateEndToEnd {
        static func config(_ dir: ChaosDir, _ name: String, url: String, locate: String) throws -> String {
            let path = dir.path(name)
            try Data(
                """
                {"minTimeBetweenLocationsSeconds":0,"minDistanceBetweenLocationsMeters":0,"locate":\(locate),
                 "sync":{"url":"\(url)/v1/locations","batchSize":100,"syncThreshold":1}}
                """.utf8
            ).write(to: URL(fileURLWithPath: path))
            return path
        }

        static func request(_ base: String, _ install: String) async throws -> String {
            let r = try await HTTP.send("POST", base + "/v1/devices/\(install)/locate")
            #expect(r.status == 202, "\(r.text)")
            return try #require(try r.json()["id"] as? String)
        }

        /// Polls the request until it leaves pending/delivered (bounded).
        static func outcome(_ base: String, _ install: String, _ id: String) async throws -> [String: Any] {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let o = try await HTTP.send("GET", base + "/v1/devices/\(install)/locate/\(id)").json()
                if let s = o["state"] as? String, s != "pending", s != "delivered" { return o }
                try await Task.sleep(for: .milliseconds(10))  // polling the lifecycle, bounded by the deadline
            }
            throw TestFailure("locate request \(id) never finished")
        }

        @Test func trackingAgentAnswersAndSharingOffRefuses() async throws {
            let dir = try ChaosDir()
            let server = try await ServerProcess.start(database: dir.path("ingest.sqlite"), dir: dir, extra: ["--locate-interval", "0"])
            defer { _ = server.terminate() }
            let agent = try ChaosBinaries.agent()
            let config = try Self.config(dir, "agent.json", url: server.base, locate: #"{"minIntervalSeconds":0,"timeoutSeconds":5}"#)
            let track = try ChildProcess(
                agent,
                [
                    "track", "--source", "replay:\(ChaosTests.track)", "--speed", "1", "--db", dir.path("agent.sqlite"),
                    "--config", config, "--drain-timeout", "10",
                ], dir: dir, name: "track")
            defer { track.kill() }
            var install: String?
            let deadline = ContinuousClock.now + .seconds(60)
            while install == nil, ContinuousClock.now < deadline {
                let devices = try await HTTP.send("GET", server.base + "/v1/devices").json()["devices"] as? [[String: Any]]
                install = devices?.first?["install_id"] as? String
                if install == nil { try await Task.sleep(for: .milliseconds(100)) }  // polling the first upload, bounded
            }
            let device = try #require(install, "the agent never uploaded: \(track.stderr)")

            var latencies: [Double] = []
            for _ in 0..<50 {
                let start = ContinuousClock.now
                let id = try await Self.request(server.base, device)
                let done = try await Self.outcome(server.base, device, id)
                latencies.append(
                    Double((ContinuousClock.now - start).components.attoseconds) / 1e15 + Double(
                        (ContinuousClock.now - start).components.seconds) * 1000)
                #expect(done["state"] as? String == "answered", "\(done)")
                let fix = done["fix"] as? [String: Any]
                #expect(fix?["trigger"] as? String == "manual")
                #expect(fix?["locate_request_id"] as? String == id)
            }
            latencies.sort()
            print("locate e2e: p50 \(Int(latencies[24])) ms, p99 \(Int(latencies[49])) ms over 50 requests")

            // A device with sharing off refuses, with its reason (cron-style `beekon locate`).
            let off = try Self.config(dir, "off.json", url: server.base, locate: #"{"sharing":false}"#)
            let db2 = dir.path("off.sqlite")
            let first = try await ChildProcess(
                agent, ["locate", "--source", "replay:\(ChaosTests.track)", "--db", db2, "--config", off], dir: dir, name: "locate0"
            ).finish(timeout: .seconds(60))
            #expect(first.stdout.contains("no pending locate request"), "\(first.stdout) \(first.stderr)")
            let status = try await ChildProcess(agent, ["status", "--db", db2, "--json"], dir: dir, name: "status").finish(
                timeout: .seconds(60))
            let other = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["install_id"] as? String)
            let refusedId = try await Self.request(server.base, other)
            let answered = try await ChildProcess(
                agent, ["locate", "--source", "replay:\(ChaosTests.track)", "--db", db2, "--config", off, "--wait", "5"], dir: dir,
                name: "locate1"
            ).finish(timeout: .seconds(60))
            #expect(answered.stdout.contains("refused locate request \(refusedId): sharing_off"), "\(answered.stdout) \(answered.stderr)")
            let refused = try await Self.outcome(server.base, other, refusedId)
            #expect(refused["state"] as? String == "refused" && refused["reason"] as? String == "sharing_off", "\(refused)")
        }
    }
}
