import BeekonTestSupport
import Foundation
import Testing

/// `beekon beacons` as a real process on the real recordings (SPEC BY-5).
@Suite struct AgentBeaconsTests {
    static let twoScanners = Fixtures.data("beacons/starksm64_two_scanners_2015-03-03.json.gz")

    @Test("BY-5: beekon beacons prints one NDJSON event per line with identity, scanner, type, timestamp and distance")
    func ndjson() async throws {
        let out = try await AgentProcess.run([
            "beacons", "--source", "replay:\(Self.twoScanners)", "--enter-distance", "6",
            "--exit-distance", "8", "--dwell", "3", "--format", "ndjson",
        ])
        #expect(out.status == 0, "\(out.stderr)")
        let events = try out.stdout.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(events.count == 10, "\(out.stdoutText)")
        let first = try #require(events.first)
        #expect(first["uuid"] as? String == "DAF246CE-8363-11E4-B116-123B93F75CBA")
        #expect(first["major"] as? Int == 1 && first["minor"] as? Int == 4 && first["scanner"] as? String == "Room202")
        #expect(first["type"] as? String == "enter" && first["timestamp"] as? String == "2015-03-03T21:16:04.085Z")
        #expect((first["distance"] as? Double).map { $0 > 0.5 && $0 < 2 } == true)
        let carried = events.filter { $0["minor"] as? Int == 1 && $0["type"] as? String == "enter" }.compactMap { $0["scanner"] as? String }
        #expect(carried.contains("Room202") && carried.last == "Room201", "\(carried)")
        #expect(out.stderr.contains("39802 readings, 0 skipped, 0 errors; 10 events"))
    }

    @Test("BY-5: --scanner keeps one scanner; text format; bad input is a one-line error with a non-zero exit")
    func filterTextAndErrors() async throws {
        let text = try await AgentProcess.run([
            "beacons", "--source", "replay:\(Self.twoScanners)", "--enter-distance", "6",
            "--exit-distance", "8", "--scanner", "Room201", "--format", "text",
        ])
        #expect(text.status == 0)
        #expect(!text.stdout.isEmpty && text.stdout.allSatisfy { $0.contains(" Room201 ") && !$0.contains("Room202") })
        let tmp = TempDir()
        let junk = try tmp.write("junk.json", "{\"scannerID\": 5}")
        let bad = try await AgentProcess.run(["beacons", "--source", "replay:\(junk)"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("object 1: scan log object: bad scannerID"), "\(bad.stderr)")
        let range = try await AgentProcess.run([
            "beacons", "--source", "replay:\(Self.twoScanners)", "--enter-distance", "3",
            "--exit-distance", "2",
        ])
        #expect(range.status == 2 && range.stderr.split(separator: "\n").count == 1)
    }

    @Test("BY-5: track's --beacons and --beacon-source go together; beacons --config needs a sync url — one-line refusals, exit 2")
    func beaconOptionRefusals() async throws {
        let tmp = TempDir()
        let beacons = try tmp.write("beacons.json", #"{"enterDistance": 1}"#)
        let noSync = try tmp.write("agent.json", #"{"minTimeBetweenLocationsSeconds": 0}"#)
        let track = Fixtures.data("gpx/togeojson_apple_watch_walk_1hz.gpx")
        for (arguments, message) in [
            (["track", "--source", "replay:\(track)", "--beacon-source", "hci"], "--beacon-source needs --beacons CONFIG"),
            (["track", "--source", "replay:\(track)", "--beacons", beacons], "--beacons needs --beacon-source replay:FILE or hci"),
            (["track", "--source", "replay:\(track)", "--beacons", beacons, "--beacon-source", "usb"], "--beacons needs --beacon-source"),
            (["beacons", "--source", "replay:\(Self.twoScanners)", "--config", noSync, "--db", tmp.path("a.sqlite")], "no sync url"),
        ] {
            let out = try await AgentProcess.run(arguments)
            #expect(out.status == 2, "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains(message), "\(out.stderr)")
        }
    }
}
