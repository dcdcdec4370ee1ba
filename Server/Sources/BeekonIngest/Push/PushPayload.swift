import BeekonWire
import Foundation

/// The request bodies of the pushes the server sends (SPEC XR-6). The payloads are
/// `BeekonWire`'s ``WireLocatePush`` and ``WireNudgePush`` (one codec for the SDK or host that
/// reads them and the server that writes them); this adds only the FCM HTTP v1 envelope.
enum PushPayload {
    /// The APNs request body for `requestId`: `WireLocatePush.apnsPayload`.
    static func apns(requestId: UUID) -> [UInt8] {
        [UInt8](WireLocatePush(locateRequestID: requestId).apnsPayload)
    }

    /// The FCM HTTP v1 `messages:send` body of a locate request: a high-priority data message
    /// (Android delivers high priority through Doze; normal would wait for the next maintenance window).
    static func fcm(requestId: UUID, token: String) -> [UInt8] {
        var w = WireJSONWriter(capacity: 300)
        w.raw("{\"message\":{\"token\":")
        w.string(token)
        w.raw(",\"data\":")
        data(WireLocatePush(locateRequestID: requestId).fcmData, into: &w)
        w.raw(",\"android\":{\"priority\":\"high\"}}}")
        return w.bytes
    }

    /// The FCM HTTP v1 `messages:send` body of a nudge: a notification message (`title`, `body`)
    /// with the data map that marks it as Beekon's, kept by FCM for `ttlSeconds` while the device
    /// is unreachable, at normal priority (it needs no wake-up through Doze), tagged so that a
    /// newer nudge replaces an older one in the tray.
    static func fcmNudge(_ nudge: WireNudgePush, token: String, ttlSeconds: Int64) -> [UInt8] {
        var w = WireJSONWriter(capacity: 300 + nudge.title.utf8.count + nudge.body.utf8.count)
        w.raw("{\"message\":{\"token\":")
        w.string(token)
        w.raw(",\"notification\":{\"title\":")
        w.string(nudge.title)
        w.raw(",\"body\":")
        w.string(nudge.body)
        w.raw("},\"data\":")
        data(nudge.fcmData, into: &w)
        w.raw(",\"android\":{\"priority\":\"normal\",\"ttl\":")
        w.string("\(ttlSeconds)s")
        w.raw(",\"notification\":{\"tag\":")
        w.string(WireNudgePush.threadID)
        w.raw("}}}}")
        return w.bytes
    }

    /// A data map as a JSON object, keys sorted (FCM: every value a string).
    private static func data(_ map: [String: String], into w: inout WireJSONWriter) {
        w.raw("{")
        for (i, (k, v)) in map.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.string(k)
            w.raw(":")
            w.string(v)
        }
        w.raw("}")
    }
}
