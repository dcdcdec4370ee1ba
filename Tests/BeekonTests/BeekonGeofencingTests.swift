import BeekonTestSupport
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation
import Testing

@Suite("Geofencing and stationary handling through the SDK (GF-1..3, FX-6, FX-8)")
struct BeekonGeofencingTests {
    let home = Geofence(id: "home", latitude: 48.0, longitude: 11.0, radiusMeters: 200)

    @Test func fencesPersistAndAddIsAtomic() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.addGeofences([home, Geofence(id: "work", latitude: 48.1, longitude: 11.1, radiusMeters: 50)])
        do {
            try await beekon.addGeofences([
                Geofence(id: "ok", latitude: 1, longitude: 1, radiusMeters: 10),
                Geofence(id: "bad", latitude: 1, longitude: 1, radiusMeters: 0),
            ])
            Issue.record("a bad entry must fail the whole add")
        } catch {
            #expect("\(error)".contains("bad"))
        }
        try await beekon.addGeofences([Geofence(id: "work", latitude: 48.2, longitude: 11.2, radiusMeters: 75)])
        try await beekon.removeGeofences(ids: ["nope"])
        let relaunched = h.beekon()
        let fences = try await relaunched.listGeofences()
        #expect(fences.map(\.id) == ["home", "work"])
        #expect(fences[1].radiusMeters == 75, "re-adding replaces by id")
        try await relaunched.removeGeofences(ids: ["home"])
        #expect(try await h.beekon().listGeofences().map(\.id) == ["work"])
    }

    @Test func crossingsAreStoredEmittedAndRecordedBypassingTheGate() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(whenStationary: .keepTracking))  // 30 s / 100 m gate
        try await beekon.addGeofences([home])
        try await beekon.start()
        var events = beekon.geofenceEvents.makeAsyncIterator()
        await h.provider.send(fix(0, north: -1000))  // outside: first fix
        await h.provider.send(fix(5, north: -50))  // inside, 5 s later: gate would reject
        let enter = try #require(await events.next())
        #expect(enter.geofenceId == "home" && enter.transition == .enter)
        await h.provider.send(fix(10, north: 1000))  // exit
        let exit = try #require(await events.next())
        #expect(exit.transition == .exit)
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        #expect(rows.map(\.trigger) == [.interval, .geofence, .geofence])
        let stored = try await beekon.geofenceEventHistory(from: .distantPast, to: .distantFuture)
        #expect(stored == [enter, exit])
        #expect(enter.id.uuidV7Millis != nil)
    }

    @Test func relaunchInsideAFenceDoesNotEnterTwice() async throws {
        let h = Harness()
        let first = h.beekon()
        try await first.addGeofences([home])
        try await first.start()
        await h.provider.send(fix(0, north: 0))
        #expect(try await first.geofenceEventHistory(from: .distantPast, to: .distantFuture).count == 1)
        let second = h.beekon()
        #expect(try await second.resumeIfNeeded())
        await h.provider.send([fix(60, north: 10), fix(120, north: -10)])
        #expect(try await second.geofenceEventHistory(from: .distantPast, to: .distantFuture).count == 1)
    }

    @Test func notifyFlagsSuppressEventsButStateStillTracks() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.addGeofences([Geofence(id: "quiet", latitude: 48, longitude: 11, radiusMeters: 200, notifyOnEntry: false)])
        try await beekon.start()
        await h.provider.send([fix(0, north: -1000), fix(60, north: 0), fix(120, north: 1000)])
        let events = try await beekon.geofenceEventHistory(from: .distantPast, to: .distantFuture)
        #expect(events.map(\.transition) == [.exit])
    }

    @Test func aGeofenceEventWakesTheUploadAtOnce() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, BeekonConfig(sync: SyncConfig(url: loopbackURL)))
        try await beekon.addGeofences([home])
        try await beekon.start()
        await h.provider.send(fix(0, north: 0))
        await transport.waitForRequests(1)
        let envelope = await transport.requests[0].envelope
        #expect(envelope.geofenceEvents.map(\.geofenceId) == ["home"])
        #expect(envelope.locations.map(\.trigger) == [.geofence])
    }

    @Test func stationaryPausesTheSourceAndMotionResumesIt() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        try await beekon.start()
        // Stay within 5 m for more than the 120 s dwell.
        await h.provider.send((0...13).map { fix(Double($0) * 10, north: Double($0 % 2)) })
        #expect(await beekon.motion == .stationary)
        #expect(await h.provider.powerModes == [.balanced, .paused])
        await h.provider.send(fix(200, north: 500))
        #expect(await beekon.motion == .moving)
        let modes = await h.provider.powerModes
        let stats = await beekon.statistics
        #expect(modes == [.balanced, .paused, .balanced], "modes \(modes) stats \(stats)")
        let last = try #require(try await beekon.history(from: .distantPast, to: .distantFuture).last)
        #expect(last.trigger == .motion && last.motion == .moving)
        #expect(try await beekon.storeReport().motion == .moving)
        let motions = try await beekon.history(from: .distantPast, to: .distantFuture).map(\.motion)
        #expect(motions.contains(.stationary), "the motion field reflects the detector")
    }

    @Test func aPausedSourceIsWokenForOneFixToCheckForMotion() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.start()
        await h.provider.send((0...13).map { fix(Double($0) * 10, north: 0) })
        #expect(await h.provider.powerModes == [.balanced, .paused])
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(60))  // the probe wakes the source
        while await h.provider.powerModes.count < 3 { await Task.yield() }
        #expect(await h.provider.powerModes == [.balanced, .paused, .balanced])
        await h.provider.send(fix(300, north: 1))  // still inside: back to sleep
        #expect(await h.provider.powerModes == [.balanced, .paused, .balanced, .paused])
        #expect(await beekon.motion == .stationary)
    }

    @Test func checkInsComeFromTheCachedPositionWithAFreshTimestamp() async throws {
        let h = Harness()
        let beekon = h.beekon()
        try await beekon.configure(BeekonConfig(whenStationary: .pauseWithCheckIns, checkInIntervalSeconds: 600))
        try await beekon.start()
        await h.provider.send((0...13).map { fix(Double($0) * 10, north: 0) })
        #expect(await beekon.motion == .stationary)
        let before = try await beekon.history(from: .distantPast, to: .distantFuture).count
        var positions = beekon.positions.makeAsyncIterator()
        _ = await positions.next()  // replay-1: the latest stored fix
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(730))  // dwell completed at 120 s; first check-in due at 720 s
        let checkIn = try #require(await positions.next())
        #expect(checkIn.trigger == .checkIn && checkIn.motion == .stationary)
        #expect(checkIn.timestamp == h.clock.now(), "a fresh timestamp: the clock's now when the check-in fell due")
        #expect(checkIn.latitude == fix(130).latitude)
        #expect(try await beekon.history(from: .distantPast, to: .distantFuture).count == before + 1)
        #expect(await h.provider.powerModes.contains(.paused), "the source was paused while stationary")
    }

    @Test func currentLocationIsIndependentOfTracking() async throws {
        let h = Harness()
        let beekon = h.beekon()
        #expect(await beekon.getCurrentLocation(timeout: .seconds(1)) == nil)
        await h.provider.setOneShotFix(fix(0, accuracy: .nan))
        let one = try #require(await beekon.getCurrentLocation(timeout: .seconds(1)))
        #expect(one.accuracy == nil, "sanitised")
        #expect(beekon.currentState == .idle)
    }
}
