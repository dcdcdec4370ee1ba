import Foundation

/// A locate request delivered by a silent push (BY-2): the contract between the server's
/// APNs/FCM sender and the device SDK. Two shapes carry the same fields:
///
/// - APNs (a background notification; iOS delivers the whole payload as `userInfo`):
///   `{"aps":{"content-available":1},"beekon":{"type":"locate","locate_request_id":"<id>"}}`
/// - FCM data message (every value a string):
///   `{"beekon_type":"locate","beekon_locate_request_id":"<id>"}`
///
/// Anything else (another type, no Beekon key, an id that is not a UUID) is not ours: the
/// parsers return nil and the host handles the notification itself.
public struct WireLocatePush: Hashable, Sendable {
    /// The locate request to answer.
    public var locateRequestID: UUID

    /// A push for `locateRequestID`.
    public init(locateRequestID: UUID) {
        self.locateRequestID = locateRequestID
    }

    /// The `type` / `beekon_type` value of a locate request.
    public static let locateType = "locate"

    /// Reads either shape from a decoded payload: an APNs `userInfo` (`[AnyHashable: Any]` as
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` passes it) or an
    /// FCM data map. Nil when the payload is not a Beekon locate request.
    public init?(userInfo: [AnyHashable: Any]) {
        let type: Any?
        let id: Any?
        if let beekon = userInfo["beekon"] as? [AnyHashable: Any] {
            (type, id) = (beekon["type"], beekon["locate_request_id"])
        } else {
            (type, id) = (userInfo["beekon_type"], userInfo["beekon_locate_request_id"])
        }
        guard type as? String == Self.locateType, let text = id as? String, text.utf8.count == 36,
            let uuid = UUID(wire: text)
        else { return nil }
        self.init(locateRequestID: uuid)
    }

    /// Reads either shape from the payload's JSON bytes; nil when it is not JSON or not ours.
    public init?(json: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
        self.init(userInfo: object)
    }

    /// The APNs payload, as JSON bytes (what the server sends with `apns-push-type: background`).
    public var apnsPayload: Data {
        Data(
            #"{"aps":{"content-available":1},"beekon":{"type":"locate","locate_request_id":"\#(locateRequestID.wireString)"}}"#
                .utf8)
    }

    /// The FCM data message's `data` map.
    public var fcmData: [String: String] {
        ["beekon_type": Self.locateType, "beekon_locate_request_id": locateRequestID.wireString]
    }
}
