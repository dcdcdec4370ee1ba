/// Every message between the SDK (or the agent) and `beekon-ingest`, each a type of this module
/// that both sides write and read with the same code. Each has a golden file
/// (`Tests/BeekonWireTests/Golden/messages/<rawValue>.json`) that the SDK's tests and the
/// server's tests both decode and re-encode byte for byte.
///
/// | message | direction, route | type |
/// |---|---|---|
/// | ``envelope`` | device → `POST <ingest path>` | ``WireEnvelope`` (``WireLocation``, ``WireGeofenceEvent``, ``WireProximityEvent``) |
/// | ``ingestAnswer`` | its 2xx answer | ``WireIngestAnswer`` |
/// | ``commands`` | `GET /v1/devices/{install_id}/commands` answer | ``WireCommands`` (``WireLocateNotice``) |
/// | ``locateRefusal`` | device → `POST /v1/devices/{install_id}/locate/{request_id}/answer` | ``WireLocateRefusal`` |
/// | ``pushTokenAPNs``, ``pushTokenFCM`` | device → `PUT /v1/devices/{install_id}/push-token` | ``WirePushTokenRegistration`` |
/// | ``locatePushAPNs`` | server → APNs → device (silent push) | ``WireLocatePush`` |
///
/// A locate *answer* is not a message of its own: it is a fix in an ordinary upload that carries
/// ``WireLocation/locateRequestId``.
///
/// Not here, and why: the OAuth token exchange (`POST /oauth/token`) is form-encoded
/// RFC 6749 on the way in and its standard token response on the way out; the error body
/// (`{"error","message"}`) is read by status code only; and the live stream's events (SSE,
/// `GET /v1/live`) are read by viewers, which the SDK's `LiveViewer` passes on as raw SSE
/// messages without reading their data.
public enum WireMessage: String, CaseIterable, Sendable {
    /// An upload (schema v1).
    case envelope
    /// The ingest endpoint's 2xx answer.
    case ingestAnswer = "ingest-answer"
    /// The command channel's answer: the open locate requests.
    case commands
    /// A device's refusal of a locate request.
    case locateRefusal = "locate-refusal"
    /// An APNs push-token registration.
    case pushTokenAPNs = "push-token-apns"
    /// An FCM push-token registration.
    case pushTokenFCM = "push-token-fcm"
    /// The APNs payload of a locate request's silent push.
    case locatePushAPNs = "locate-push-apns"
}
