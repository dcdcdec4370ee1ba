import Beekon
import BeekonTestSupport
import BeekonWire
import Foundation
import Testing
@testable import BeekonAgent

/// The fix pipeline in the agent: its config keys (the configuration article's names), `beekon
/// activity` and `beekon logs` over a real faulty upload run (BY-4, BY-6).
@Suite("Agent pipeline: config keys, activity, diagnostic log")
struct AgentPipelineTests {
    @Test("BY-4, BY-6: every pipeline key reaches the SDK config and is in the configuration article")
    func keysReachTheSDK() throws {
        let config = try AgentConfig.parse(
            Data(
                #"""
                {"classifyActivity":true,"heartbeatSeconds":30,"appState":"background","diagnosticLogLevel":"debug",
                 "diagnosticLogCapacity":1000,
                 "foregroundProfile":{"preset":"balanced","minTimeBetweenLocationsSeconds":20,"minDistanceBetweenLocationsMeters":25,"heartbeatSeconds":30},
                 "backgroundProfile":{"preset":"saver","minDistanceBetweenLocationsMeters":150,"whenStationary":"pauseWithCheckIns",
                                      "checkInIntervalSeconds":300,"stationaryRadiusMeters":20},
                 "sync":{"url":"https://example.org/v1/locations","privacy":{"blurRadiusMeters":200,
                   "zones":[{"id":"home","latitude":52.5,"longitude":13.4,"radiusMeters":150,"action":"withhold"}]}}}
                """#.utf8))
        #expect(config.sdk.classifyActivity && config.sdk.heartbeatSeconds == 30 && config.appState == .background)
        #expect(config.sdk.diagnosticLogLevel == .debug && config.sdk.diagnosticLogCapacity == 1000)
        #expect(config.sdk.foregroundProfile == .foreground)
        #expect(
            config.sdk.backgroundProfile?.whenStationary == .pauseWithCheckIns && config.sdk.backgroundProfile?.stationaryRadiusMeters == 20
        )
        #expect(config.sdk.sync?.privacy?.blurRadiusMeters == 200 && config.sdk.sync?.privacy?.zones.first?.action == .withhold)
        #expect(config.sdk.resolved(for: .background).effectiveMinDistanceMeters == 150)
        let article = try String(contentsOf: Fixtures.configurationArticle, encoding: .utf8)
        for key in AgentConfig.pipelineKeys + ["sync.privacy"] {
            #expect(article.contains("`\(key)`"), "the configuration article's table lacks `\(key)`")
        }
    }

    @Test(
        "BY-4: bad pipeline values are one-line errors naming the key",
        arguments: [
            #"{"classifyActivity":1}"#, #"{"heartbeatSeconds":0.5}"#, #"{"appState":"sleeping"}"#,
            #"{"diagnosticLogLevel":"verbose"}"#, #"{"diagnosticLogCapacity":5}"#, #"{"foregroundProfile":{"gate":1}}"#,
            #"{"sync":{"url":"https://x.org","privacy":{"blurRadiusMeters":2}}}"#,
            #"{"sync":{"url":"https://x.org","privacy":{"zones":[{"id":"a","latitude":1,"longitude":2}]}}}"#,
        ])
    func badValues(text: String) {
        do {
            _ = try AgentConfig.parse(Data(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(!error.description.isEmpty && !error.description.contains("\n"), "\(error.description)")
        }
    }

    @Test("BY-4: `beekon activity` prints the confusion table of the walk (≥ 90 % walking)")
    func activityCommand() async throws {
        let run = try await AgentProcess.run(["activity", "--source", "replay:\(Fixtures.walkGPX)", "--label", "walking", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdoutText.utf8)) as? [String: Any])
        #expect((json["moving_correct"] as? Double ?? 0) >= 0.9, "\(json)")
        let bad = try await AgentProcess.run(["activity", "--source", "replay:\(Fixtures.walkGPX)", "--label", "flying"])
        #expect(bad.status == 2 && bad.stderr.contains("--label"))
    }

    @Test(
        "BY-4: `beekon activity --evaluate DIR` prints per-mode and per-recording confusion, leave-one-recording-out and leave-one-source-out; --train prints Swift"
    )
    func activityEvaluate() async throws {
        let tmp = TempDir()
        let dir = tmp.url
        for (mode, file) in [("walking", Fixtures.walkGPX), ("automotive", Fixtures.busGPX)] {
            try FileManager.default.createDirectory(at: dir.appendingPathComponent(mode), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: file, toPath: dir.appendingPathComponent("\(mode)/\(mode).gpx").path)
        }
        let run = try await AgentProcess.run(["activity", "--evaluate", dir.path], timeout: .seconds(600))
        #expect(run.status == 0, "\(run.stderr)")
        let out = run.stdoutText
        #expect(out.contains("== evaluation set: shipped model, never trained on =="), "\(out)")
        #expect(out.contains("== leave-one-recording-out"), "\(out)")
        #expect(out.contains("== leave-one-source-out"), "\(out)")
        let walkRow = try #require(run.stdout.first { $0.hasPrefix("walking/walking.gpx") })
        #expect(walkRow.contains("98.5 %"), "\(walkRow)")  // the shipped model on the walk
        #expect(run.stdout.contains { $0.hasPrefix("walking ") && $0.hasSuffix("%") })  // the per-mode row
        // Without a split there is nothing to train on.
        let train = try await AgentProcess.run(["activity", "--train", dir.path])
        #expect(train.status == 1 && train.stderr.contains("no training recording"), "\(train.stderr)")
        let trainReal = try await AgentProcess.run(["activity", "--train", Fixtures.data("labelled")], timeout: .seconds(600))
        #expect(
            trainReal.status == 0 && trainReal.stdoutText.contains("package static let trained = ActivityModel("), "\(trainReal.stderr)")
        let both = try await AgentProcess.run(["activity", "--evaluate", dir.path, "--source", "replay:\(Fixtures.walkGPX)"])
        #expect(both.status == 2)
    }

    @Test(
        "BY-6: a faulty upload run's diagnostic log exports as NDJSON explaining every failed upload (status, backoff)",
        .tags(.chaos, .slow), .skippable(.chaos, .slow))
    func logsExplainFailedUploads() async throws {
        let tmp = TempDir()
        let receiver = try FaultyReceiver(script: [
            .status(500), .ok, .status(503, headers: ["Retry-After": "1"]), .ok, .status(429, headers: ["Retry-After": "1"]), .ok,
            .storeThenDrop, .ok,
        ])
        defer { receiver.stop() }
        let db = tmp.path("agent.sqlite")
        let config = try AgentSyncTests.syncConfig(tmp, url: receiver.url)
        let run = try await AgentProcess.run(AgentSyncTests.trackArgs(db: db, config: config), timeout: .seconds(60))
        #expect(run.status == 0, "exit \(run.status): \(run.stderr)")
        let logs = try await AgentProcess.run(["logs", "--db", db, "--format", "ndjson"])
        #expect(logs.status == 0, "\(logs.stderr)")
        let entries = try logs.stdout.map { line -> [String: Any] in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not JSON: \(line)")
        }
        let failures = entries.filter { $0["message"] as? String == "upload failed, will retry" }
        let retries = entries.filter { $0["message"] as? String == "upload retry scheduled" }
        let faults = receiver.received.filter { $0.action != .ok }
        #expect(faults.count == 4)
        for fault in faults {
            let batch = fault.batchID?.wireString ?? "?"
            let line = failures.first { ($0["metadata"] as? [String: String])?["batch"] == batch }
            let meta = try #require(line?["metadata"] as? [String: String], "no log line for the failed batch \(batch) (\(fault.action))")
            if case .status(let s, _) = fault.action {
                #expect(meta["status"] == "\(s)", "\(meta)")
            } else {
                #expect(meta["status"] == "none")
            }
        }
        #expect(failures.count == faults.count && retries.count == faults.count, "\(failures.count) failures, \(retries.count) retries")
        #expect(retries.allSatisfy { Double(($0["metadata"] as? [String: String])?["backoff_seconds"] ?? "") != nil })
        #expect(entries.contains { $0["message"] as? String == "state changed" })
        #expect(!logs.stdoutText.contains("32.06"), "coordinates are redacted by default")
    }
}
