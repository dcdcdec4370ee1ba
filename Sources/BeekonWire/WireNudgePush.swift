import Foundation

/// The visible notification the server sends, at most once a day, to a device that stopped
/// reporting for longer than its declared intervals allow ("location sharing stopped — open the
/// app"). Unlike ``WireLocatePush`` it is shown by the system, not handled by the SDK:
/// opening the app is what restarts its tracking. Two shapes carry it:
///
/// - APNs (`apns-push-type: alert`):
///   `{"aps":{"alert":{"title":"…","body":"…"},"thread-id":"beekon-nudge"},"beekon":{"type":"nudge"}}`
/// - FCM notification message: `notification` `{"title","body"}` with the data map
///   `{"beekon_type":"nudge"}` (every value a string).
///
/// The text is the operator's (`beekon-ingest serve --nudge-title/--nudge-body`); nothing a
/// device sends ever goes into it.
public struct WireNudgePush: Hashable, Sendable {
    /// The notification's title.
    public var title: String
    /// The notification's body.
    public var body: String

    /// A nudge with this text.
    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }

    /// The `type` / `beekon_type` value of a nudge.
    public static let nudgeType = "nudge"

    /// The APNs `thread-id` and FCM `tag` that group (and on Android replace) earlier nudges.
    public static let threadID = "beekon-nudge"

    /// Whether a delivered notification's payload (an APNs `userInfo` or an FCM data map) is a
    /// Beekon nudge, for a host that wants to tell it from its own notifications.
    public static func isNudge(userInfo: [AnyHashable: Any]) -> Bool {
        if let beekon = userInfo["beekon"] as? [AnyHashable: Any] { return beekon["type"] as? String == nudgeType }
        return userInfo["beekon_type"] as? String == nudgeType
    }

    /// Reads the APNs payload's JSON bytes; nil when they are not a Beekon nudge with an alert.
    public init?(apnsJSON: Data) {
        guard let object = try? JSONSerialization.jsonObject(with: apnsJSON) as? [String: Any], Self.isNudge(userInfo: object),
            let alert = (object["aps"] as? [String: Any])?["alert"] as? [String: Any],
            let title = alert["title"] as? String, let body = alert["body"] as? String
        else { return nil }
        self.init(title: title, body: body)
    }

    /// The APNs payload, as JSON bytes (sent with `apns-push-type: alert`).
    public var apnsPayload: Data {
        var w = WireJSONWriter(capacity: 128 + title.utf8.count + body.utf8.count)
        w.raw("{\"aps\":{\"alert\":{\"title\":")
        w.string(title)
        w.raw(",\"body\":")
        w.string(body)
        w.raw("},\"thread-id\":")
        w.string(Self.threadID)
        w.raw("},\"beekon\":{\"type\":")
        w.string(Self.nudgeType)
        w.raw("}}")
        return Data(w.bytes)
    }

    /// The FCM notification message's data map.
    public var fcmData: [String: String] { ["beekon_type": Self.nudgeType] }
}
