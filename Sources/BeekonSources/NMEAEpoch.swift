import Foundation
import Beekon

/// The sentences of one NMEA epoch (one UTC time) merged by `NMEAParser`.
struct NMEAEpoch: Sendable {
    /// The timed sentence kinds; a second one of a kind starts a new epoch.
    enum Slot { case gga, rmc }

    /// What a complete epoch turns into.
    enum Outcome {
        case fix(RawFix)
        case skip(TrackSkipReason, String)
        case nothing
    }

    /// The usable part of a valid RMC sentence.
    struct RMC: Sendable {
        var timestamp: Date
        var latitude: Double
        var longitude: Double
        var speed: Double?
        var course: Double?
    }

    var timeOfDay: Int
    var line: Int
    var hasGGA = false
    var hasRMC = false
    /// A skip for this epoch was already counted at sentence level.
    var counted = false
    var receiverSaysNoFix = false
    var rmc: RMC?
    var ggaPosition: (Double, Double)?
    var ggaHDOP: Double?
    var altitude: Double?
    var gsaHDOP: Double?
    var vtgSpeed: Double?
    var vtgCourse: Double?

    func has(_ slot: Slot) -> Bool {
        switch slot {
        case .gga: return hasGGA
        case .rmc: return hasRMC
        }
    }

    func outcome() -> Outcome {
        if receiverSaysNoFix {
            return .skip(.invalidFix, "the receiver reports no fix at \(clock)")
        }
        guard let rmc else {
            if ggaPosition != nil {
                return .skip(.incompleteEpoch, "no valid RMC for \(clock), so the date is unknown")
            }
            return .nothing
        }
        let fix = RawFix(
            timestamp: rmc.timestamp, latitude: rmc.latitude, longitude: rmc.longitude,
            accuracy: FixValues.accuracy(hdop: ggaHDOP ?? gsaHDOP),
            speed: rmc.speed ?? vtgSpeed,
            bearing: rmc.course ?? vtgCourse,
            altitude: altitude
        )
        return .fix(fix)
    }

    /// The epoch's time of day as `hh:mm:ss.sss` for messages.
    var clock: String {
        let ms = timeOfDay % 1000
        let s = timeOfDay / 1000
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let frac = ms < 10 ? "00\(ms)" : ms < 100 ? "0\(ms)" : "\(ms)"
        return "\(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60)).\(frac)"
    }
}
