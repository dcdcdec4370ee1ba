import BeekonWire
import Foundation

/// The silent push that wakes a device for a locate request (SPEC XR-6). The payloads are
/// `BeekonWire`'s ``WireLocatePush`` (one codec for the SDK that reads them and the server that
/// writes them); this adds only the FCM HTTP v1 envelope around the data map.
enum LocatePushPayload {
    /// The APNs request body for `requestId`: `WireLocatePush.apnsPayload`.
    static func apns(requestId: UUID) -> [UInt8] {
        [UInt8](WireLocatePush(locateRequestID: requestId).apnsPayload)
    }

    /// The FCM HTTP v1 `messages:send` body: a high-priority data message (Android delivers
    /// high priority through Doze; normal would wait for the next maintenance window).
    static func fcm(requestId: UUID, token: String) -> [UInt8] {
        var w = WireJSONWriter(capacity: 300)
        w.raw("{\"message\":{\"token\":")
        w.string(token)
        w.raw(",\"data\":{")
        let data = WireLocatePush(locateRequestID: requestId).fcmData
        for (i, (k, v)) in data.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.string(k)
            w.raw(":")
            w.string(v)
        }
        w.raw("},\"android\":{\"priority\":\"high\"}}}")
        return w.bytes
    }
}
