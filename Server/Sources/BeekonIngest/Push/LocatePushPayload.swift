import BeekonWire
import Foundation

/// The silent push that wakes a device for a locate request (SPEC XR-6). The contract the
/// SDK's `WireLocatePush` decodes, kept byte for byte here:
///
/// - APNs: `{"aps":{"content-available":1},"beekon":{"type":"locate","locate_request_id":"<id>"}}`
///   (a background push: no alert, sound or badge, so `apns-push-type: background` holds).
/// - FCM HTTP v1 data message (string values only):
///   `{"beekon_type":"locate","beekon_locate_request_id":"<id>"}`.
enum LocatePushPayload {
    /// The APNs request body for `requestId`.
    static func apns(requestId: UUID) -> [UInt8] {
        var w = WireJSONWriter(capacity: 120)
        w.raw("{\"aps\":{\"content-available\":1},\"beekon\":{\"type\":\"locate\",\"locate_request_id\":")
        w.string(requestId.wireString)
        w.raw("}}")
        return w.bytes
    }

    /// The FCM data map for `requestId`.
    static func fcmData(requestId: UUID) -> [String: String] {
        ["beekon_type": "locate", "beekon_locate_request_id": requestId.wireString]
    }

    /// The FCM HTTP v1 `messages:send` body: a high-priority data message (Android delivers
    /// high priority through Doze; normal would wait for the next maintenance window).
    static func fcm(requestId: UUID, token: String) -> [UInt8] {
        var w = WireJSONWriter(capacity: 300)
        w.raw("{\"message\":{\"token\":")
        w.string(token)
        w.raw(",\"data\":{")
        for (i, (k, v)) in fcmData(requestId: requestId).sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.string(k)
            w.raw(":")
            w.string(v)
        }
        w.raw("},\"android\":{\"priority\":\"high\"}}}")
        return w.bytes
    }
}
