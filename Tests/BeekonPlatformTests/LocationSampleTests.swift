@testable import Beekon
import Foundation
import Testing

/// `CLLocation`-like values → `RawFix` (SRC-5, BY-10, FX-4): CoreLocation's sentinels.
@Suite("CoreLocation fix mapping")
struct LocationSampleTests {
    let t = Date(timeIntervalSince1970: 1_767_225_600)

    @Test func aFullFixMapsEveryField() throws {
        let fix = try #require(
            LocationSample(
                timestamp: t, latitude: 45.1, longitude: 13.9, horizontalAccuracy: 4.5, altitude: 120,
                verticalAccuracy: 3, speed: 2.5, course: 180, isSimulatedBySoftware: false
            ).rawFix)
        #expect(
            fix
                == RawFix(
                    timestamp: t, latitude: 45.1, longitude: 13.9, accuracy: 4.5, speed: 2.5,
                    bearing: 180, altitude: 120, isMock: false))
    }

    @Test func negativeOrNonFiniteHorizontalAccuracyIsAnInvalidFix() {
        #expect(LocationSample(timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: -1).rawFix == nil)
        #expect(LocationSample(timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: .nan).rawFix == nil)
        #expect(LocationSample(timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: .infinity).rawFix == nil)
    }

    @Test func negativeSpeedCourseAndVerticalAccuracyAreAbsentNotZero() throws {
        let fix = try #require(
            LocationSample(
                timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: 10, altitude: 55,
                verticalAccuracy: -1, speed: -1, course: -1
            ).rawFix)
        #expect(fix.speed == nil)
        #expect(fix.bearing == nil)
        #expect(fix.altitude == nil)
        #expect(fix.accuracy == 10)
        // Zero is a real value (standing still, heading north), kept as such.
        let still = try #require(
            LocationSample(
                timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: 10,
                speed: 0, course: 0
            ).rawFix)
        #expect(still.speed == 0)
        #expect(still.bearing == 0)
    }

    @Test func simulatedBySoftwareIsMock() throws {
        let mock = try #require(
            LocationSample(
                timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: 5,
                isSimulatedBySoftware: true
            ).rawFix)
        #expect(mock.isMock)
        let unknown = try #require(LocationSample(timestamp: t, latitude: 1, longitude: 2, horizontalAccuracy: 5).rawFix)
        #expect(!unknown.isMock)  // no source information (before iOS 15): not flagged
    }

    @Test func aCachedFixKeepsItsOwnTimestamp() throws {
        // The first significant-change fix after a relaunch may be minutes old: it is judged
        // by when it was computed, so the gate drops it if it is not later than the last stored fix.
        let old = t.addingTimeInterval(-600)
        let fix = try #require(LocationSample(timestamp: old, latitude: 1, longitude: 2, horizontalAccuracy: 65).rawFix)
        #expect(fix.timestamp == old)
    }
}
