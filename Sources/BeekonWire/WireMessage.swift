/// Every message between the SDK (or the agent) and `beekon-ingest`, each a type of this module
/// that both sides write and read with the same code. Each has a golden file
/// (`Tests/BeekonWireTests/Golden/messages/`, named ``goldenFileName``) that the SDK's tests and the
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
/// | ``liveFix`` | `GET /v1/live` event `fix` (also the read API's fix object) | ``WireViewerFix`` |
/// | ``liveGeofenceEvent`` | `GET /v1/live` event `geofence_event` | ``WireViewerGeofenceEvent`` |
/// | ``liveDevice`` | `GET /v1/live` event `device` | ``WireDeviceStatusEvent`` |
/// | ``liveLocate`` | `GET /v1/live` event `locate` | ``WireLocateRequestState`` |
/// | ``liveReset`` | `GET /v1/live` event `reset` | ``WireLiveReset`` |
/// | ``tokenRefresh``, ``tokenEnrollment`` | device → `POST /oauth/token` (a form) | ``WireTokenRequest`` |
/// | ``tokenGrant`` | its 200 answer | ``WireTokenGrant`` |
/// | ``person`` | `GET /v1/me` answer | ``WirePerson`` |
/// | ``circleList`` | `GET /v1/circles` answer | ``WireCircleList`` |
/// | ``circleCreate`` | → `POST /v1/circles` | ``WireCircleCreate`` |
/// | ``circleView`` | `GET /v1/circles/{id}`, the 201 of a create, the 202 of `POST …/wake`, the circle stream's `circle` event | ``WireCircleView`` |
/// | ``circleInvitationRequest`` | → `POST /v1/circles/{id}/invitations` | ``WireCircleInvitationRequest`` |
/// | ``circleInvitation`` | `POST /v1/circles/{id}/invitations` answer | ``WireCircleInvitation`` |
/// | ``circleJoinRequest`` | → `POST /v1/circles/join` | ``WireCircleJoinRequest`` |
/// | ``circleJoin`` | its 200 answer | ``WireCircleJoin`` |
/// | ``circleSharing`` | ↔ `PUT /v1/circles/{id}/members/{person}/sharing` (also inside a view) | ``WireCircleSharing`` |
///
/// A locate *answer* is not a message of its own: it is a fix in an ordinary upload that carries
/// ``WireLocation/locateRequestId``.
///
/// Not here, and why: the error body (`{"error","message"}`) is read by status code only. The live stream's events are
/// ``WireLiveEvent``s, one case per SSE `event:` name; the SDK's `LiveViewer` reads them. A circle's
/// stream adds its `circle` event first (``WireCircleLiveEvent``).
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
    /// The live stream's `fix` event.
    case liveFix = "live-fix"
    /// The live stream's `geofence_event` event.
    case liveGeofenceEvent = "live-geofence-event"
    /// The live stream's `device` event.
    case liveDevice = "live-device"
    /// The live stream's `locate` event.
    case liveLocate = "live-locate"
    /// The live stream's `reset` event.
    case liveReset = "live-reset"
    /// A refresh-token request (a form).
    case tokenRefresh = "token-refresh"
    /// An enrollment-code request (a form).
    case tokenEnrollment = "token-enrollment"
    /// The token endpoint's grant.
    case tokenGrant = "token-grant"
    /// The caller's person.
    case person
    /// The caller's circles.
    case circleList = "circle-list"
    /// A new circle.
    case circleCreate = "circle-create"
    /// A circle as one viewer sees it.
    case circleView = "circle-view"
    /// Asking for an invitation.
    case circleInvitationRequest = "circle-invitation-request"
    /// A new invitation with its one-use code.
    case circleInvitation = "circle-invitation"
    /// Accepting an invitation.
    case circleJoinRequest = "circle-join-request"
    /// The answer to accepting an invitation.
    case circleJoin = "circle-join"
    /// A member's sharing.
    case circleSharing = "circle-sharing"

    /// The message's media type: a form for the token requests, JSON for every other (its
    /// golden file ends `.form` or `.json` accordingly).
    public var mediaType: String {
        switch self {
        case .tokenRefresh, .tokenEnrollment: return "application/x-www-form-urlencoded"
        default: return "application/json"
        }
    }

    /// The name of its golden file (`Tests/BeekonWireTests/Golden/messages/`).
    public var goldenFileName: String { rawValue + (mediaType == "application/json" ? ".json" : ".form") }
}
