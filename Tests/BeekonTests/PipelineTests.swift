@testable import Beekon
import BeekonPrimitives
import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

/// The fix pipeline through the real SDK (BY-4, BY-6): privacy at the upload, check-ins
/// uploaded at once, profile switches and the diagnostic log.
@Suite("Fix pipeline: privacy, check-ins, profiles, diagnostic log")
struct PipelineTests {
    @Test("BY-4: uploads carry blurred points and zone centres; local history keeps the precise fixes")
    func privacyAppliesToUploadsOnly() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        let zone = PrivacyZone(id: "home", latitude: 48.0 + 10 / 111_195.0, longitude: 11.0, radiusMeters: 50)
        let sync = SyncConfig(url: loopbackURL, privacy: PrivacyConfig(blurRadiusMeters: 200, zones: [zone]))
        try await configureSync(beekon, syncConfig(sync))
        try await beekon.start()
        var fixes = (0..<5).map { fix(Double($0), north: Double($0) * 5 + 1) }  // inside the zone
        for i in 0..<5 {
            var f = fix(Double(10 + i), north: 1000 + Double(i) * 7)  // outside: blurred
            f.speed = 1.5
            f.bearing = 10
            fixes.append(f)
        }
        for i in 0..<5 { fixes[i].speed = 1.5 }
        await h.provider.send(fixes)
        _ = try await beekon.sync()
        let sent = await transport.requests.flatMap { $0.envelope.locations }
        #expect(sent.count == 10)
        for (s, f) in zip(sent, fixes) {
            #expect(s.latitude != f.latitude, "no upload carries the precise latitude")
            if s.privacyZone == "home" {
                #expect(s.latitude == zone.latitude && s.longitude == 11.0 && s.speed == nil && s.bearing == nil)
            } else {
                #expect(Geodesy.distance(s.latitude, s.longitude, f.latitude, f.longitude) <= 200)
                #expect((s.accuracy ?? 0) >= 200)
            }
        }
        #expect(sent.prefix(5).allSatisfy { $0.privacyZone == "home" })
        #expect(Set(sent.suffix(5).map { "\($0.latitude),\($0.longitude)" }).count <= 2, "a 28 m stroll snaps to at most two grid points")
        let local = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(local.map(\.latitude) == fixes.map(\.latitude), "history keeps the precise fixes (the user's own device)")
        try await beekon.stop()
    }

    @Test("BY-4, FX-6: a check-in is uploaded at once (it refreshes last contact), not at the next interval")
    func checkInUploadsAtOnce() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        var config = syncConfig(SyncConfig(url: loopbackURL, intervalSeconds: 3600))
        config.whenStationary = .pauseWithCheckIns
        config.checkInIntervalSeconds = 600
        try await configureSync(beekon, config)
        try await beekon.start()
        await h.provider.send((0...13).map { fix(Double($0) * 10, north: 0) })
        let before = await transport.requests.count
        await h.clock.waitForSleepers(3)  // the hourly upload, the paused source's probe, the check-in
        h.clock.advance(by: .seconds(730))  // dwell done at 120 s; the check-in falls due at 720 s
        await transport.waitForRequests(before + 1)
        let uploaded = await transport.requests.last!.envelope.locations
        #expect(uploaded.contains { $0.trigger == .checkIn }, "the check-in went out without waiting for the hourly upload")
        try await beekon.stop()
    }

    @Test("BY-4, LC-8: setAppState switches the profile from the next fix and logs it")
    func profileSwitch() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(
            BeekonConfig(
                whenStationary: .keepTracking,
                foregroundProfile: LocationProfile(minTimeBetweenLocationsSeconds: 5, minDistanceBetweenLocationsMeters: 0),
                backgroundProfile: LocationProfile(minTimeBetweenLocationsSeconds: 60, minDistanceBetweenLocationsMeters: 0)))
        try await beekon.start()
        await h.provider.send((0..<30).map { fix(Double($0), north: Double($0) * 2) })
        try await beekon.setAppState(.background)
        await h.provider.send((30..<200).map { fix(Double($0), north: Double($0) * 2) })
        let times = try await beekon.history(from: .distantPast, to: .distantFuture).map {
            $0.timestamp.timeIntervalSince(fix(0).timestamp)
        }
        #expect(times.filter { $0 < 30 } == [0, 5, 10, 15, 20, 25])
        #expect(times.filter { $0 >= 30 } == [85, 145], "60 s from the last admitted fix (25 s), from the next fix on")
        #expect(await beekon.appState == .background)
        #expect(try await beekon.configuration().backgroundProfile != nil, "configuration() returns the base as passed")
        let log = try await beekon.diagnosticLog()
        #expect(log.contains { $0.message == "profile switched" && $0.metadata["app_state"] == "background" })
        try await beekon.stop()
        let summary = try #require(try await beekon.diagnosticLog().last { $0.message == "gate summary" })
        #expect(summary.metadata["received"] == "200" && summary.metadata["stored"] == "8" && summary.metadata["too_soon"] == "192")
    }

    @Test("BY-4: a foreground heartbeat admits a fix every N seconds while the gate rejects them")
    func heartbeat() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(
            BeekonConfig(minDistanceBetweenLocationsMeters: 100, whenStationary: .keepTracking, heartbeatSeconds: 30))
        try await beekon.start()
        await h.provider.send((0...120).map { fix(Double($0), north: 0) })
        let times = try await beekon.history(from: .distantPast, to: .distantFuture).map {
            $0.timestamp.timeIntervalSince(fix(0).timestamp)
        }
        #expect(times == [0, 30, 60, 90, 120])
        try await beekon.stop()
    }

    @Test("BY-6: the log keeps state changes across restarts, drops the oldest beyond the cap, redacts coordinates")
    func diagnosticLog() async throws {
        let h = Harness()
        do {
            let beekon = h.beekon()
            try await beekon.configure(BeekonConfig(diagnosticLogCapacity: 100))
            try await beekon.start()
            try await beekon.stop()
            let log = try await beekon.diagnosticLog()
            #expect(log.contains { $0.message == "state changed" && $0.metadata["state"] == "tracking" })
            beekon.diagnosticLogger.debug("not kept at info")
            for i in 0..<300 { beekon.diagnosticLogger.info("entry \(i)", metadata: ["latitude": "48.123456", "token": "secret-value"]) }
            await beekon.flushDiagnostics()
        }
        // A new instance on the same database: persisted, capped, redacted.
        let again = h.beekon()
        let log = try await again.diagnosticLog()
        #expect(log.count == 100)
        let numbered = log.compactMap { $0.message.hasPrefix("entry ") ? Int($0.message.dropFirst(6)) : nil }
        #expect(numbered.last == 299 && numbered.allSatisfy { $0 >= 200 } && numbered == numbered.sorted(), "the oldest are dropped")
        #expect(
            log.filter { $0.message.hasPrefix("entry ") }.allSatisfy {
                $0.metadata["latitude"] == "redacted" && $0.metadata["token"] == nil
            })
        #expect(
            try await again.diagnosticLog(includeCoordinates: true).last { $0.message == "entry 299" }?.metadata["latitude"] == "48.123456")
        #expect(!log.contains { $0.message == "not kept at info" })
        try await again.configure(BeekonConfig(diagnosticLogLevel: .debug))
        again.diagnosticLogger.debug("kept at debug")
        #expect(try await again.diagnosticLog().contains { $0.message == "kept at debug" }, "the level is adjustable at run time")
        for line in log.map(\.ndjson) {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] as? String == "info" && object?["seq"] is Int)
        }
    }

    @Test("BY-6: a failed upload is explained in the log with its status and backoff")
    func failedUploadExplained() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        await transport.enqueue(statuses: 503)
        let beekon = h.beekon(transport: transport)
        try await beekon.configure(syncConfig())
        try await beekon.start()
        await h.provider.send(fix(0))
        _ = try await beekon.sync()
        let log = try await beekon.diagnosticLog()
        let failure = try #require(log.first { $0.message == "upload failed, will retry" })
        #expect(failure.metadata["status"] == "503")
        let retry = try #require(log.first { $0.message == "upload retry scheduled" })
        #expect(Double(retry.metadata["backoff_seconds"] ?? "") ?? 0 > 0)
        try await beekon.stop()
    }
}
