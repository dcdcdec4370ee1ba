import Foundation
import GRDB

/// The fix the error-bounded admission holds (BY-9), kept in `meta` so that a process
/// killed with a window open (kill -9) loses none of the fixes it had accepted: the next
/// `start()` or resume stores it (it ends a segment that covers every earlier window fix).
extension LocationStore {
    static let heldFixKey = "admission_held_fix"

    /// Replaces the persisted held fix (nil: none). Committed without its own fsync: it
    /// survives the death of the process, and the next stored fix's fsync makes it durable.
    func setHeldFix(_ location: Location?) async throws(BeekonError) {
        let text = location.map(HeldFixText.encode)
        try await writeUnforced("persisting the held fix") { db in try Self.setMeta(db, Self.heldFixKey, text) }
    }

    /// The persisted held fix, if any (an unreadable one is dropped: nil).
    func heldFix() async throws(BeekonError) -> Location? {
        let text = try await read("reading the held fix") { db in try Self.meta(db, Self.heldFixKey) }
        return text.flatMap(HeldFixText.decode)
    }
}

/// A `Location` as one line of `;`-separated fields (time in milliseconds since 1970; an empty
/// field is nil). Hand-written rather than JSON: it is written after every accepted fix.
private enum HeldFixText {
    static func encode(_ l: Location) -> String {
        func o(_ d: Double?) -> String { d.map { "\($0)" } ?? "" }
        return [
            "1", l.id.uuidString, l.sessionId.uuidString, "\(Int64((l.timestamp.timeIntervalSince1970 * 1000).rounded()))",
            "\(l.latitude)", "\(l.longitude)", o(l.accuracy), o(l.speed), o(l.bearing), o(l.altitude),
            l.trigger.rawValue, l.motion.rawValue, l.isMock ? "1" : "0",
            l.activity?.rawValue ?? "", l.quality?.rawValue ?? "",
        ].joined(separator: ";")
    }

    static func decode(_ text: String) -> Location? {
        let f = text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard f.count == 15, f[0] == "1", let id = UUID(uuidString: f[1]), let session = UUID(uuidString: f[2]),
            let ms = Int64(f[3]), let lat = Double(f[4]), let lon = Double(f[5]),
            let trigger = Trigger(rawValue: f[10]), let motion = Motion(rawValue: f[11])
        else { return nil }
        func o(_ s: String) -> Double? { s.isEmpty ? nil : Double(s) }
        return Location(
            id: id, sessionId: session, timestamp: Date(timeIntervalSince1970: Double(ms) / 1000),
            latitude: lat, longitude: lon, accuracy: o(f[6]), speed: o(f[7]), bearing: o(f[8]),
            altitude: o(f[9]), trigger: trigger, motion: motion, isMock: f[12] == "1",
            activity: Activity(rawValue: f[13]), quality: Quality(rawValue: f[14]))
    }
}
