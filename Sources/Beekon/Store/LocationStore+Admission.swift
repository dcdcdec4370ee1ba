import BeekonWire
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

/// The held fix in the one codec of `Location`: the upload envelope it would travel in
/// (schema v1, written and read by `BeekonWire`), with one location. Its device fields are
/// placeholders (`platform` "held"); only the session and the location are read back.
private enum HeldFixText {
    static func encode(_ l: Location) -> String {
        let envelope = WireEnvelope(
            batchId: l.id, sessionId: l.sessionId, sentAt: WireTimestamp(l.timestamp),
            device: WireDevice(installId: l.id, platform: "held", sdkVersion: BeekonVersion.current), locations: [l.wire])
        return String(decoding: WireJSONWriter.encode(envelope), as: UTF8.self)
    }

    static func decode(_ text: String) -> Location? {
        guard let envelope = try? WireEnvelope.decode(Data(text.utf8)), envelope.locations.count == 1 else { return nil }
        return Location(wire: envelope.locations[0], sessionId: envelope.sessionId)
    }
}
