import BeekonPrimitives
import Foundation
import Testing

@testable import Beekon

/// The stationary wake region. Its radius comes from the stationary
/// detector, never from the fences; leaving it asks for a fix, and that fix resumes movement
/// through the SDK's own detector. The fence pager's refresh region is another region in
/// another slot.
@Suite("Stationary wake region")
struct StationaryWakeTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let metresPerDegree = 111_195.0

    static func raw(_ seconds: Double, north: Double, accuracy: Double = 5) -> RawFix {
        RawFix(timestamp: t0.addingTimeInterval(seconds), latitude: 45 + north / metresPerDegree, longitude: 14, accuracy: accuracy)
    }

    static func fence(_ n: Int) -> Geofence {
        // Spread 2…40 km north-east of the device, so most fence sets leave the refresh region wide.
        let km = 2 + Double(n % 40)
        return Geofence(id: "f\(n)", latitude: 45 + km / 111.195, longitude: 14 + Double(n / 40) * 0.01, radiusMeters: 100)
    }

    /// The detector made stationary at the origin (2 min of fixes inside its radius).
    static func stationaryDetector(radius: Double = 5) -> (StationaryDetector, SourceTuning.Stationary) {
        var detector = StationaryDetector(policy: .pause, radiusMeters: radius)
        var actions: [StationaryDetector.Action] = []
        for s in stride(from: 0.0, through: 130, by: 10) { actions += detector.observe(fix: raw(s, north: 0)) }
        #expect(actions.contains(.pauseProvider) && detector.motion == .stationary)
        let anchor = detector.anchor!
        return (
            detector, SourceTuning.Stationary(latitude: anchor.latitude, longitude: anchor.longitude, radiusMeters: detector.radiusMeters)
        )
    }

    @Test("The wake radius is the detector's (tens to a few hundred metres) with 0, 5 and 500 fences")
    func theRadiusIgnoresTheFences() throws {
        for count in [0, 5, 500] {
            var paging = RegionPaging(fences: (0..<count).map(Self.fence))
            let first = paging.observe(latitude: 45, longitude: 14)
            let change = try #require(first)
            var wake = StationaryWakePlan()
            let placed = wake.paused(at: SourceTuning.Stationary(latitude: 45, longitude: 14, radiusMeters: 5))
            guard case .place(let region)? = placed.first, placed.count == 1 else {
                Issue.record("one region placed, got \(placed)")
                continue
            }
            #expect(region.radiusMeters == 100, "\(count) fences: 3 × 5 m, raised to the 100 m floor")
            #expect(paging.slotCount == 19, "one of the 20 OS slots is the wake region's")
            #expect(change.add.count == min(count, 18), "18 fences + the refresh region + the wake region = 20")
            #expect(!paging.isOurs(StationaryWakePlan.identifier) && StationaryWakePlan.identifier != RegionPager.refreshIdentifier)
        }
        // Before: with fewer than 20 fences the only stationary wake was the 50 km refresh region.
        #expect(RegionPager(fences: []).page(latitude: 45, longitude: 14).refresh.radiusMeters == 50_000)
        #expect(
            [5, 40, 50, 100, 1_000].map { StationaryWakePlan.radius(stationaryRadiusMeters: $0) } == [100, 120, 150, 300, 300])
        #expect(
            BackgroundRefreshPlan(syncIntervalSeconds: nil).wakeSources(paused: true, stationaryRadiusMeters: 5)
                == [.significantChanges, .regionAroundStationaryPosition(radiusMeters: 100)])
    }

    @Test("Walking away: exit → one fix requested → the detector resumes movement → the region goes, within 200 m")
    func anExitAsksForAFixThatResumesMovement() throws {
        var (detector, stationary) = Self.stationaryDetector()
        var wake = StationaryWakePlan()
        let placed = wake.paused(at: stationary)
        guard case .place(let region)? = placed.first else {
            Issue.record("a region is placed at the pause")
            return
        }
        // An hour still: the plan asks for no continuous updates and acts on nothing.
        #expect(LocationPowerPlan(mode: .paused).service(liveUpdatesAvailable: true) == .none)
        #expect(LocationPowerPlan(mode: .paused).service(liveUpdatesAvailable: false) == .none)
        #expect(wake.fix(latitude: stationary.latitude, longitude: stationary.longitude).isEmpty, "a significant change inside: nothing")
        // Walk north at 1.4 m/s; the OS reports the exit at the first position outside the region.
        var metres = 0.0
        var t = 3_730.0
        while region.contains(latitude: 45 + metres / Self.metresPerDegree, longitude: 14) {
            metres += 1.4
            t += 1
        }
        #expect(wake.exited() == [.requestFix])
        #expect(wake.awaitingFix)
        let fix = Self.raw(t + 5, north: metres)  // requestLocation's answer
        #expect(metres <= 200, "the first fix after walking away comes within 200 m of leaving, not at ~500 m")
        let resumed = detector.observe(fix: fix)
        #expect(resumed == [.resumeProvider, .resumedMoving(fix)], "the fix resumes tracking with trigger motion")
        #expect(detector.motion == .moving)
        _ = wake.fix(latitude: fix.latitude, longitude: fix.longitude)
        #expect(wake.resumed() == [.remove], "the source runs again: the wake region goes")
        #expect(wake.region == nil)
    }

    @Test("A fix after an exit that the detector still finds inside re-centres the region on it")
    func aLargeDetectorRadiusReCentres() throws {
        var (detector, stationary) = Self.stationaryDetector(radius: 1_000)
        var wake = StationaryWakePlan()
        _ = wake.paused(at: stationary)
        #expect(wake.region?.radiusMeters == 300)
        #expect(wake.exited() == [.requestFix])
        let fix = Self.raw(4_000, north: 320)
        #expect(detector.observe(fix: fix).isEmpty, "still inside the 1 km detector radius: no resume")
        let moved = wake.fix(latitude: fix.latitude, longitude: fix.longitude)
        #expect(moved == [.place(StationaryWakePlan.Region(latitude: fix.latitude, longitude: 14, radiusMeters: 300))])
        #expect(wake.fix(latitude: fix.latitude, longitude: fix.longitude).isEmpty, "only the fix an exit asked for moves it")
    }

    @Test("CoreLocation's automatic pause resumes from the wake region or a significant change")
    func theAutomaticPauseResumes() {
        var wake = StationaryWakePlan()
        let placed = wake.osPaused(latitude: 45, longitude: 14, radiusMeters: 5)
        #expect(placed == [.place(StationaryWakePlan.Region(latitude: 45, longitude: 14, radiusMeters: 100))])
        #expect(wake.exited() == [.restartUpdates, .remove], "the app restarts the standard service itself")
        #expect(wake.exited().isEmpty)
        _ = wake.osPaused(latitude: 45, longitude: 14, radiusMeters: 5)
        #expect(wake.fix(latitude: 45.01, longitude: 14) == [.restartUpdates, .remove], "a significant-change fix restarts too")
        #expect(wake.resumed().isEmpty)
    }
}
