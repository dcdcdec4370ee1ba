import Foundation

/// A member's role in a circle.
public enum WireCircleRole: String, Hashable, Sendable, CaseIterable {
    /// Invites, removes members, deletes the circle.
    case owner
    /// Sees the others and is seen.
    case member
}

/// What a viewer sees of a member: their positions, or why not.
public enum WireCircleMemberState: String, Hashable, Sendable, CaseIterable {
    /// Shown at the precision and in the hours the member allows.
    case sharing
    /// The member paused sharing, or every device of theirs refused a wake-up because sharing is
    /// off (``WireCircleMember/pausedReason`` says which): no position, only since when.
    case paused
    /// Outside the hours the member shares: no position.
    case outsideHours = "outside_hours"
}

/// What opening a circle's view asked of one device.
public enum WireCircleWake: String, Hashable, Sendable, CaseIterable {
    /// A new locate request was made (pushed when the device has a push token).
    case requested
    /// The device had an open request already: joined, not repeated.
    case coalesced
    /// The device's wake-up budget is spent.
    case rateLimited = "rate_limited"
    /// The viewer's wake-up budget is spent: nobody was woken.
    case viewerLimited = "viewer_limited"
    /// The member paused sharing or is outside their hours: not asked.
    case notAsked = "not_asked"
}

/// What a member lets the others see of them (`PUT /v1/circles/{id}/members/{person}/sharing`
/// sends it, the circle's view shows it). Written
/// `{"precision_m","hours","time_zone","paused","paused_at"}`, an absent value as `null`; the
/// server ignores `paused_at` in a request (it keeps the time sharing was first paused).
public struct WireCircleSharing: Hashable, Sendable {
    /// Positions coarsened to this many metres; nil for full precision.
    public var precisionMeters: Double?
    /// Hours of the day (`HH:MM-HH:MM` in ``timeZone``); nil for all day.
    public var hours: String?
    /// The IANA time zone of ``hours``.
    public var timeZone: String?
    /// Sharing is paused: the others see "paused", never a position.
    public var paused: Bool
    /// Since when it is paused (set by the server).
    public var pausedAt: WireTimestamp?

    /// Creates a setting (default: everything, all day).
    public init(
        precisionMeters: Double? = nil, hours: String? = nil, timeZone: String? = nil, paused: Bool = false, pausedAt: WireTimestamp? = nil
    ) {
        self.precisionMeters = precisionMeters
        self.hours = hours
        self.timeZone = timeZone
        self.paused = paused
        self.pausedAt = pausedAt
    }

    /// The JSON bytes.
    public func encoded() -> Data { WireJSONWriter.bytes(64) { $0.write(self) } }

    /// Reads a setting; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleSharing {
        try validated(WireMessageReader.read(RawCircleSharing.self, data), path: "$")
    }

    static func validated(_ raw: RawCircleSharing, path: String) throws(WireDecodingError) -> WireCircleSharing {
        if let p = raw.precision_m, !(p.isFinite && p > 0) { throw .invalid(path: "\(path).precision_m", reason: "must be positive") }
        return WireCircleSharing(
            precisionMeters: raw.precision_m, hours: try WireEnvelope.optional(raw.hours, "\(path).hours", max: 64),
            timeZone: try WireEnvelope.optional(raw.time_zone, "\(path).time_zone", max: 64), paused: raw.paused ?? false,
            pausedAt: try WireCircles.time(raw.paused_at, "\(path).paused_at"))
    }
}

/// One device of a member as a viewer sees it: its reporting state, newest fix and the state of
/// the circle's newest wake-up request to it. Written
/// `{"install_id","status","last_contact_at","last_fix_at","fix","request","wake"?}`; `wake` only
/// in the answer that woke the circle (`POST …/wake`, the live stream's `circle` event).
public struct WireCircleDevice: Hashable, Sendable {
    /// The install.
    public var installId: UUID
    /// Its reporting state; nil when the member's rules hide contact (or it never uploaded).
    public var status: WireDeviceStatus?
    /// When the server last heard from it.
    public var lastContactAt: WireTimestamp?
    /// The time of its newest fix the viewer may see.
    public var lastFixAt: WireTimestamp?
    /// That fix, at the member's precision.
    public var fix: WireViewerFix?
    /// The circle's newest wake-up request to it (without its fix).
    public var request: WireLocateRequestState?
    /// What opening the view asked of it.
    public var wake: WireCircleWake?

    /// Creates a device.
    public init(
        installId: UUID, status: WireDeviceStatus? = nil, lastContactAt: WireTimestamp? = nil, lastFixAt: WireTimestamp? = nil,
        fix: WireViewerFix? = nil, request: WireLocateRequestState? = nil, wake: WireCircleWake? = nil
    ) {
        self.installId = installId
        self.status = status
        self.lastContactAt = lastContactAt
        self.lastFixAt = lastFixAt
        self.fix = fix
        self.request = request
        self.wake = wake
    }
}

/// One member of a circle as a viewer sees them. Written
/// `{"person","display_name","role","you","joined_at","sharing","state","paused_reason","paused_since","last_seen_at","devices"}`.
public struct WireCircleMember: Hashable, Sendable {
    /// The person (the `person` of the enrolment codes of their installs).
    public var person: String
    /// The name they set for themself.
    public var displayName: String?
    /// Owner or member.
    public var role: WireCircleRole
    /// This member is the viewer.
    public var you: Bool
    /// When they joined.
    public var joinedAt: WireTimestamp
    /// What they let the others see.
    public var sharing: WireCircleSharing
    /// What the viewer sees of them.
    public var state: WireCircleMemberState
    /// Why they are paused: `paused` (their setting) or `sharing_off` (their devices refused).
    public var pausedReason: String?
    /// Since when they are paused.
    public var pausedSince: WireTimestamp?
    /// The newest fix time of their devices the viewer may see ("last seen").
    public var lastSeenAt: WireTimestamp?
    /// Their devices (none while paused or outside their hours).
    public var devices: [WireCircleDevice]

    /// Creates a member.
    public init(
        person: String, displayName: String? = nil, role: WireCircleRole, you: Bool = false, joinedAt: WireTimestamp,
        sharing: WireCircleSharing = WireCircleSharing(), state: WireCircleMemberState = .sharing, pausedReason: String? = nil,
        pausedSince: WireTimestamp? = nil, lastSeenAt: WireTimestamp? = nil, devices: [WireCircleDevice] = []
    ) {
        self.person = person
        self.displayName = displayName
        self.role = role
        self.you = you
        self.joinedAt = joinedAt
        self.sharing = sharing
        self.state = state
        self.pausedReason = pausedReason
        self.pausedSince = pausedSince
        self.lastSeenAt = lastSeenAt
        self.devices = devices
    }
}

/// A circle as one viewer sees it: `GET /v1/circles/{id}`, the 201 of `POST /v1/circles`, the
/// 202 of `POST /v1/circles/{id}/wake` and the live stream's first event (`circle`). Written
/// `{"id","name","created_at","role","members"}`.
public struct WireCircleView: Hashable, Sendable {
    /// The circle id (`cir_` and 24 hex digits).
    public var id: String
    /// Its name.
    public var name: String
    /// When it was created.
    public var createdAt: WireTimestamp
    /// The viewer's role; nil for an admin key.
    public var role: WireCircleRole?
    /// Its members, longest-standing first.
    public var members: [WireCircleMember]

    /// Creates a view.
    public init(id: String, name: String, createdAt: WireTimestamp, role: WireCircleRole?, members: [WireCircleMember]) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.role = role
        self.members = members
    }

    /// The member who is the viewer, if any.
    public var you: WireCircleMember? { members.first(where: \.you) }

    /// The JSON bytes.
    public func encoded() -> Data { WireJSONWriter.bytes(512 + members.count * 700) { $0.write(self) } }

    /// Reads a view; unknown members are ignored; fixes and requests are read by their own messages' readers.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleView {
        struct Raw: Decodable {
            var id: String
            var name: String
            var created_at: String
            var role: String?
            var members: [RawMember]
        }
        struct RawMember: Decodable {
            var person: String
            var display_name: String?
            var role: String
            var you: Bool
            var joined_at: String
            var sharing: RawCircleSharing
            var state: String
            var paused_reason: String?
            var paused_since: String?
            var last_seen_at: String?
            var devices: [RawDevice]
        }
        struct RawDevice: Decodable {
            var install_id: String
            var status: String?
            var last_contact_at: String?
            var last_fix_at: String?
            var fix: WireJSONValue?
            var request: WireJSONValue?
            var wake: String?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        var members: [WireCircleMember] = []
        for (i, m) in raw.members.enumerated() {
            let p = "members[\(i)]"
            var devices: [WireCircleDevice] = []
            for (j, d) in m.devices.enumerated() {
                let q = "\(p).devices[\(j)]"
                devices.append(
                    WireCircleDevice(
                        installId: try WireEnvelope.uuid(d.install_id, "\(q).install_id"),
                        status: try WireCircles.enumValue(d.status, "\(q).status"),
                        lastContactAt: try WireCircles.time(d.last_contact_at, "\(q).last_contact_at"),
                        lastFixAt: try WireCircles.time(d.last_fix_at, "\(q).last_fix_at"),
                        fix: try WireCircles.nested(d.fix, "\(q).fix", WireViewerFix.decode),
                        request: try WireCircles.nested(d.request, "\(q).request", WireLocateRequestState.decode),
                        wake: try WireCircles.enumValue(d.wake, "\(q).wake")))
            }
            members.append(
                WireCircleMember(
                    person: try WireEnvelope.nonEmpty(m.person, "\(p).person", max: 100),
                    displayName: try WireEnvelope.optional(m.display_name, "\(p).display_name", max: 100),
                    role: try WireCircles.enumValue(m.role, "\(p).role"), you: m.you,
                    joinedAt: try WireEnvelope.timestamp(m.joined_at, "\(p).joined_at"),
                    sharing: try WireCircleSharing.validated(m.sharing, path: "\(p).sharing"),
                    state: try WireCircles.enumValue(m.state, "\(p).state"),
                    pausedReason: try WireEnvelope.optional(m.paused_reason, "\(p).paused_reason", max: 64),
                    pausedSince: try WireCircles.time(m.paused_since, "\(p).paused_since"),
                    lastSeenAt: try WireCircles.time(m.last_seen_at, "\(p).last_seen_at"), devices: devices))
        }
        return WireCircleView(
            id: try WireCircles.circleID(raw.id, "id"), name: try WireEnvelope.nonEmpty(raw.name, "name", max: 100),
            createdAt: try WireEnvelope.timestamp(raw.created_at, "created_at"), role: try WireCircles.enumValue(raw.role, "role"),
            members: members)
    }
}

/// One circle in a list: `{"id","name","created_at"}`.
public struct WireCircleSummary: Hashable, Sendable {
    /// The circle id.
    public var id: String
    /// Its name.
    public var name: String
    /// When it was created.
    public var createdAt: WireTimestamp

    /// Creates a summary.
    public init(id: String, name: String, createdAt: WireTimestamp) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
    }
}

/// The caller's circles (`GET /v1/circles`): `{"circles":[…],"truncated":true?}`, newest first;
/// `truncated` only when more exist than the `limit` asked for.
public struct WireCircleList: Hashable, Sendable {
    /// The circles.
    public var circles: [WireCircleSummary]
    /// More circles exist than were listed.
    public var truncated: Bool

    /// Creates a list.
    public init(circles: [WireCircleSummary], truncated: Bool = false) {
        self.circles = circles
        self.truncated = truncated
    }

    /// The JSON bytes.
    public func encoded() -> Data { WireJSONWriter.bytes(32 + circles.count * 120) { $0.write(self) } }

    /// Reads a list; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleList {
        struct Raw: Decodable {
            struct Item: Decodable {
                var id: String
                var name: String
                var created_at: String
            }
            var circles: [Item]
            var truncated: Bool?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        var circles: [WireCircleSummary] = []
        for (i, c) in raw.circles.enumerated() {
            circles.append(
                WireCircleSummary(
                    id: try WireCircles.circleID(c.id, "circles[\(i)].id"),
                    name: try WireEnvelope.nonEmpty(c.name, "circles[\(i)].name", max: 100),
                    createdAt: try WireEnvelope.timestamp(c.created_at, "circles[\(i)].created_at")))
        }
        return WireCircleList(circles: circles, truncated: raw.truncated ?? false)
    }
}

/// A new circle (`POST /v1/circles`): `{"name"}`, and `"owner"` when an admin names the person
/// who owns it (a person creating a circle owns it and sends no owner).
public struct WireCircleCreate: Hashable, Sendable {
    /// Its name, 1…100 bytes of UTF-8.
    public var name: String
    /// The owner an admin names; nil for a person's own circle.
    public var owner: String?

    /// Creates a request.
    public init(name: String, owner: String? = nil) {
        self.name = name
        self.owner = owner
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(32 + name.utf8.count) { w in
            w.raw("{\"name\":")
            w.string(name)
            if let owner { w.member("owner", string: owner) }
            w.raw("}")
        }
    }

    /// Reads a request; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the name is empty.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleCreate {
        struct Raw: Decodable {
            var name: String
            var owner: String?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        return WireCircleCreate(name: try WireEnvelope.nonEmpty(raw.name, "name", max: 100), owner: raw.owner)
    }
}

/// An invitation to a circle (`POST /v1/circles/{id}/invitations`, 201): `{"code","id","circle_id","expires_at"}`.
/// The code is shown once (the server keeps only its hash) and joins one person.
public struct WireCircleInvitation: Hashable, Sendable {
    /// The one-use code (`bci1.…`) the invited person joins with.
    public var code: String
    /// The invitation's id (`inv_…`).
    public var id: String
    /// The circle it joins.
    public var circleId: String
    /// When it expires unused.
    public var expiresAt: WireTimestamp

    /// Creates an invitation.
    public init(code: String, id: String, circleId: String, expiresAt: WireTimestamp) {
        self.code = code
        self.id = id
        self.circleId = circleId
        self.expiresAt = expiresAt
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(200) { w in
            w.raw("{\"code\":")
            w.string(code)
            w.member("id", string: id)
            w.member("circle_id", string: circleId)
            w.member("expires_at", string: expiresAt.description)
            w.raw("}")
        }
    }

    /// Reads an invitation; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleInvitation {
        struct Raw: Decodable {
            var code: String
            var id: String
            var circle_id: String
            var expires_at: String
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        return WireCircleInvitation(
            code: try WireEnvelope.nonEmpty(raw.code, "code", max: 200), id: try WireEnvelope.nonEmpty(raw.id, "id", max: 100),
            circleId: try WireCircles.circleID(raw.circle_id, "circle_id"),
            expiresAt: try WireEnvelope.timestamp(raw.expires_at, "expires_at"))
    }
}

/// A new invitation (`POST /v1/circles/{id}/invitations`): `{"expires_in_seconds"}`, or `{}` for the
/// server's default lifetime (7 days).
public struct WireCircleInvitationRequest: Hashable, Sendable {
    /// The invitation's lifetime in seconds (60 … 2,592,000); nil for the default.
    public var expiresInSeconds: Int?

    /// Creates a request.
    public init(expiresInSeconds: Int? = nil) { self.expiresInSeconds = expiresInSeconds }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(40) { w in
            w.raw("{")
            if let expiresInSeconds { w.raw("\"expires_in_seconds\":" + String(expiresInSeconds)) }
            w.raw("}")
        }
    }

    /// Reads a request; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the lifetime is not positive.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleInvitationRequest {
        struct Raw: Decodable { var expires_in_seconds: Int? }
        let raw = try WireMessageReader.read(Raw.self, data)
        if let s = raw.expires_in_seconds, s < 1 { throw .invalid(path: "expires_in_seconds", reason: "must be positive") }
        return WireCircleInvitationRequest(expiresInSeconds: raw.expires_in_seconds)
    }
}

/// Accepting an invitation (`POST /v1/circles/join`): the request `{"code"}`.
public struct WireCircleJoinRequest: Hashable, Sendable {
    /// The invitation's code.
    public var code: String

    /// Creates a request.
    public init(code: String) { self.code = code }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(24 + code.utf8.count) { w in
            w.raw("{\"code\":")
            w.string(code)
            w.raw("}")
        }
    }

    /// Reads a request; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the code is empty.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleJoinRequest {
        struct Raw: Decodable { var code: String }
        return WireCircleJoinRequest(code: try WireEnvelope.nonEmpty(WireMessageReader.read(Raw.self, data).code, "code", max: 200))
    }
}

/// The answer to accepting an invitation (200): `{"circle_id","joined"}`; `joined` is false when
/// the person was a member already (the invitation is then left unused).
public struct WireCircleJoin: Hashable, Sendable {
    /// The circle.
    public var circleId: String
    /// Newly joined.
    public var joined: Bool

    /// Creates an answer.
    public init(circleId: String, joined: Bool) {
        self.circleId = circleId
        self.joined = joined
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(96) { w in
            w.raw("{\"circle_id\":")
            w.string(circleId)
            w.raw(",\"joined\":")
            w.raw(joined ? "true" : "false")
            w.raw("}")
        }
    }

    /// Reads an answer; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the id is not a circle id.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCircleJoin {
        struct Raw: Decodable {
            var circle_id: String
            var joined: Bool
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        return WireCircleJoin(circleId: try WireCircles.circleID(raw.circle_id, "circle_id"), joined: raw.joined)
    }
}

/// The caller's person (`GET /v1/me`): `{"person","display_name"}`.
public struct WirePerson: Hashable, Sendable {
    /// The person a device credential acts for.
    public var person: String
    /// The name they show in their circles.
    public var displayName: String?

    /// Creates a person.
    public init(person: String, displayName: String?) {
        self.person = person
        self.displayName = displayName
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        WireJSONWriter.bytes(128) { w in
            w.raw("{\"person\":")
            w.string(person)
            w.raw(",\"display_name\":")
            if let displayName { w.string(displayName) } else { w.raw("null") }
            w.raw("}")
        }
    }

    /// Reads a person; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the person is empty.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WirePerson {
        struct Raw: Decodable {
            var person: String
            var display_name: String?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        return WirePerson(
            person: try WireEnvelope.nonEmpty(raw.person, "person", max: 100),
            displayName: try WireEnvelope.optional(raw.display_name, "display_name", max: 100))
    }
}

/// One event of a circle's live stream (`GET /v1/circles/{id}/live`, SSE): first `circle` (the
/// view after the wake-up it made), then the live stream's events (``WireLiveEvent``) of the
/// members' devices, at each member's sharing.
public enum WireCircleLiveEvent: Hashable, Sendable {
    /// `circle`: the circle as the viewer sees it.
    case circle(WireCircleView)
    /// Any event of the live stream (`fix`, `device`, `locate`, …).
    case live(WireLiveEvent)

    /// The SSE `event:` name.
    public var name: String {
        switch self {
        case .circle: return "circle"
        case .live(let e): return e.name
        }
    }

    /// The SSE `data:` bytes.
    public func encoded() -> Data {
        switch self {
        case .circle(let v): return v.encoded()
        case .live(let e): return e.encoded()
        }
    }

    /// Reads the `data:` of an event named `event`; nil for a name this version does not know.
    /// - Throws: `WireDecodingError` when the data does not fit its event's type.
    public static func decode(event: String, data: Data) throws(WireDecodingError) -> WireCircleLiveEvent? {
        if event == "circle" { return .circle(try WireCircleView.decode(data)) }
        return try WireLiveEvent.decode(event: event, data: data).map(WireCircleLiveEvent.live)
    }
}

extension WireJSONWriter {
    /// Runs `body` on a fresh writer of `capacity` bytes; its bytes.
    static func bytes(_ capacity: Int, _ body: (inout WireJSONWriter) -> Void) -> Data {
        var w = WireJSONWriter(capacity: capacity)
        body(&w)
        return Data(w.bytes)
    }

    /// Appends a member's sharing object.
    public mutating func write(_ s: WireCircleSharing) {
        raw("{\"precision_m\":")
        if let p = s.precisionMeters { number(p) } else { raw("null") }
        optionalMember("hours", s.hours)
        optionalMember("time_zone", s.timeZone)
        raw(",\"paused\":")
        raw(s.paused ? "true" : "false")
        optionalMember("paused_at", s.pausedAt?.description)
        raw("}")
    }

    /// Appends one device of a circle's view.
    public mutating func write(_ d: WireCircleDevice) {
        raw("{\"install_id\":")
        string(d.installId.wireString)
        optionalMember("status", d.status?.rawValue)
        optionalMember("last_contact_at", d.lastContactAt?.description)
        optionalMember("last_fix_at", d.lastFixAt?.description)
        raw(",\"fix\":")
        if let f = d.fix { write(f) } else { raw("null") }
        raw(",\"request\":")
        if let r = d.request { write(r) } else { raw("null") }
        if let wake = d.wake { member("wake", string: wake.rawValue) }
        raw("}")
    }

    /// Appends one member of a circle's view.
    public mutating func write(_ m: WireCircleMember) {
        raw("{\"person\":")
        string(m.person)
        optionalMember("display_name", m.displayName)
        member("role", string: m.role.rawValue)
        raw(",\"you\":")
        raw(m.you ? "true" : "false")
        member("joined_at", string: m.joinedAt.description)
        raw(",\"sharing\":")
        write(m.sharing)
        member("state", string: m.state.rawValue)
        optionalMember("paused_reason", m.pausedReason)
        optionalMember("paused_since", m.pausedSince?.description)
        optionalMember("last_seen_at", m.lastSeenAt?.description)
        raw(",\"devices\":[")
        for (i, d) in m.devices.enumerated() {
            if i > 0 { raw(",") }
            write(d)
        }
        raw("]}")
    }

    /// Appends a circle's view.
    public mutating func write(_ v: WireCircleView) {
        raw("{\"id\":")
        string(v.id)
        member("name", string: v.name)
        member("created_at", string: v.createdAt.description)
        optionalMember("role", v.role?.rawValue)
        raw(",\"members\":[")
        for (i, m) in v.members.enumerated() {
            if i > 0 { raw(",") }
            write(m)
        }
        raw("]}")
    }

    /// Appends a list of circles.
    public mutating func write(_ list: WireCircleList) {
        raw("{\"circles\":[")
        for (i, c) in list.circles.enumerated() {
            if i > 0 { raw(",") }
            raw("{\"id\":")
            string(c.id)
            member("name", string: c.name)
            member("created_at", string: c.createdAt.description)
            raw("}")
        }
        raw("]")
        if list.truncated { raw(",\"truncated\":true") }
        raw("}")
    }

    /// Appends `,"key":"value"`, or `,"key":null` when `value` is nil.
    mutating func optionalMember(_ key: String, _ value: String?) {
        if let value {
            member(key, string: value)
        } else {
            raw(",\"")
            raw(key)
            raw("\":null")
        }
    }
}

/// The wire shape of a member's sharing for `JSONDecoder`.
struct RawCircleSharing: Decodable {
    var precision_m: Double?
    var hours: String?
    var time_zone: String?
    var paused: Bool?
    var paused_at: String?
}

/// The circle messages' shared checks.
public enum WireCircles {
    /// Whether `text` is a circle id: `cir_` and 24 lowercase hex digits.
    public static func isCircleID(_ text: String) -> Bool {
        let hex = text.utf8.dropFirst(4)
        return text.hasPrefix("cir_") && hex.count == 24 && hex.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func circleID(_ s: String, _ path: String) throws(WireDecodingError) -> String {
        guard isCircleID(s) else { throw .invalid(path: path, reason: "not a circle id (cir_ and 24 hex digits)") }
        return s
    }

    static func time(_ s: String?, _ path: String) throws(WireDecodingError) -> WireTimestamp? {
        guard let s else { return nil }
        return try WireEnvelope.timestamp(s, path)
    }

    static func enumValue<E: RawRepresentable>(_ s: String, _ path: String) throws(WireDecodingError) -> E where E.RawValue == String {
        guard let v = E(rawValue: s) else { throw .invalid(path: path, reason: "unknown value \"\(s)\"") }
        return v
    }

    static func enumValue<E: RawRepresentable>(_ s: String?, _ path: String) throws(WireDecodingError) -> E? where E.RawValue == String {
        guard let s else { return nil }
        return try enumValue(s, path) as E
    }

    /// A nested object read by its own message's reader (re-written from the parsed value, which
    /// keeps every string and every number's value); errors name the path inside the outer message.
    static func nested<T>(_ value: WireJSONValue?, _ path: String, _ read: (Data) throws(WireDecodingError) -> T) throws(WireDecodingError)
        -> T?
    {
        guard let value, value != .null else { return nil }
        do {
            return try read(value.encoded())
        } catch .invalid(let inner, let reason) {
            throw .invalid(path: inner == "$" ? path : "\(path).\(inner)", reason: reason)
        } catch {
            throw .invalid(path: path, reason: error.description)
        }
    }
}

/// Any JSON value, as `JSONDecoder` read it: lets a message nest another message's object and
/// hand it to that message's own reader.
enum WireJSONValue: Decodable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([WireJSONValue])
    case object([(String, WireJSONValue)])

    init(from decoder: any Decoder) throws {
        if let c = try? decoder.container(keyedBy: AnyKey.self) {
            self = .object(try c.allKeys.map { ($0.stringValue, try c.decode(WireJSONValue.self, forKey: $0)) })
            return
        }
        if var c = try? decoder.unkeyedContainer() {
            var items: [WireJSONValue] = []
            while !c.isAtEnd { items.append(try c.decode(WireJSONValue.self)) }
            self = .array(items)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    func encoded() -> Data { WireJSONWriter.bytes(256) { write(into: &$0) } }

    private func write(into w: inout WireJSONWriter) {
        switch self {
        case .null: w.raw("null")
        case .bool(let b): w.raw(b ? "true" : "false")
        case .number(let n): w.number(n)
        case .string(let s): w.string(s)
        case .array(let items):
            w.raw("[")
            for (i, v) in items.enumerated() {
                if i > 0 { w.raw(",") }
                v.write(into: &w)
            }
            w.raw("]")
        case .object(let members):
            w.raw("{")
            for (i, (k, v)) in members.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(k)
                w.raw(":")
                v.write(into: &w)
            }
            w.raw("}")
        }
    }

    static func == (a: WireJSONValue, b: WireJSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        default: return false
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
