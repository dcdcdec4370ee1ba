import BeekonChaos
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 17 (BY-5) end to end: the real `beekon` agent ranges a real beacon recording and
    /// uploads its proximity events to a real `beekon-ingest` process, which stores each once
    /// and returns them from its read API.
    @Suite("Beacon agent end to end: beekon ranging into a real beekon-ingest", .tags(.slow), .skippable(.slow))
    struct BeaconAgentEndToEnd {
        static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../Tests/Data")
            .standardizedFileURL
        static let twoScanners = data.appendingPathComponent("beacons/starksm64_two_scanners_2015-03-03.json.gz").path
        static let walk = data.appendingPathComponent("gpx/togeojson_apple_watch_walk_1hz.gpx").path

        /// A temporary folder with the agent's config pointing at `server`.
        static func setUp(_ server: ServerProcess) throws -> (dir: URL, config: String, beacons: String) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-beacons-e2e-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let config = dir.appendingPathComponent("agent.json")
            try Data(
                """
                {"minTimeBetweenLocationsSeconds":0,"minDistanceBetweenLocationsMeters":0,
                 "sync":{"url":"\(server.base)/v1/locations","batchSize":500,"syncThreshold":500}}
                """.utf8
            ).write(to: config)
            let beacons = dir.appendingPathComponent("beacons.json")
            try Data(#"{"enterDistance": 6, "exitDistance": 8, "dwell": 3}"#.utf8).write(to: beacons)
            return (dir, config.path, beacons.path)
        }

        /// The device's proximity events on the server, and the agent's install id.
        static func served(_ server: ServerProcess, db: String, beekon: URL) async throws -> (install: String, events: [[String: Any]]) {
            let status = try await Subprocess.run(beekon, ["status", "--db", db, "--json"], timeout: .seconds(30))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(json["pending_uploads"] as? Int == 0, "\(json)")
            let install = try #require(json["install_id"] as? String, "no install_id: \(status.stdout)")
            let body = try await HTTP.send("GET", server.base + "/v1/devices/\(install)/proximity-events?limit=5000").json()
            return (install, try #require(body["proximity_events"] as? [[String: Any]]))
        }

        @Test("BY-5: beacons-only — `beekon beacons --config` uploads exactly the events it prints; a second drain adds nothing")
        func beaconsOnlyUploadsWhatItPrints() async throws {
            let beekon = try AgentBinary.url()
            try await ChaosTests.withServerProcess { server in
                let (dir, config, beacons) = try Self.setUp(server)
                defer { try? FileManager.default.removeItem(at: dir) }
                let db = dir.appendingPathComponent("agent.sqlite").path
                let run = try await Subprocess.run(
                    beekon,
                    ["beacons", "--source", "replay:\(Self.twoScanners)", "--beacons", beacons, "--config", config, "--db", db],
                    timeout: .seconds(180))
                #expect(run.status == 0, "beekon beacons exited \(run.status): \(run.stderr.suffix(600))")
                #expect(run.stdout.contains("uploads complete"), "\(run.stdout.suffix(300))")
                let printed = try run.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }.map { line in
                    try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                }
                #expect(printed.count >= 4, "the two-scanner run has at least the entries of minors 1, 3 and 4")
                let sync = try await Subprocess.run(beekon, ["sync", "--db", db, "--config", config], timeout: .seconds(60))
                #expect(sync.status == 0, "\(sync.stderr)")
                let served = try await Self.served(server, db: db, beekon: beekon).events
                func key(_ e: [String: Any]) -> String {
                    ["uuid", "major", "minor", "scanner", "region", "type", "timestamp"].map { k in
                        (e[k] as? String)?.uppercased() ?? (e[k].map { "\($0)" } ?? "nil")
                    }.joined(separator: "|")
                }
                #expect(served.map(key) == printed.map(key))
                #expect(Set(served.compactMap { $0["id"] as? String }).count == printed.count, "one id per event")
            }
        }

        @Test("BY-5: `beekon track --beacons` ranges beside the location source; fixes and proximity events both arrive")
        func trackWithBeacons() async throws {
            let beekon = try AgentBinary.url()
            try await ChaosTests.withServerProcess { server in
                let (dir, config, beacons) = try Self.setUp(server)
                defer { try? FileManager.default.removeItem(at: dir) }
                let db = dir.appendingPathComponent("agent.sqlite").path
                let run = try await Subprocess.run(
                    beekon,
                    [
                        "track", "--source", "replay:\(Self.walk)", "--speed", "max", "--db", db, "--config", config,
                        "--beacons", beacons, "--beacon-source", "replay:\(Self.twoScanners)",
                    ], timeout: .seconds(180))
                #expect(run.status == 0, "beekon track exited \(run.status): \(run.stderr.suffix(600))")
                #expect(run.stdout.contains("uploads complete"), "\(run.stdout.suffix(300))")
                let recorded = try #require(
                    run.stdout.split(separator: "\n").first { $0.hasPrefix("beacons: ") }, "\(run.stdout.suffix(400))")
                let (install, served) = try await Self.served(server, db: db, beekon: beekon)
                #expect(recorded == "beacons: \(served.count) proximity events recorded")
                #expect(
                    served.contains {
                        $0["minor"] as? Int == 3 && $0["scanner"] as? String == "Room201" && $0["type"] as? String == "enter"
                    })
                let fixes = try await HTTP.send("GET", server.base + "/v1/devices/\(install)/fixes?limit=5000").json()
                #expect((fixes["fixes"] as? [Any])?.count ?? 0 > 1000, "the walk's fixes arrived beside the events")
            }
        }
    }
}
