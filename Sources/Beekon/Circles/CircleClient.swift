import BeekonWire
import Foundation

extension Beekon {
    /// The circles of the person this install is enrolled for (a family app's map): list, create,
    /// invite, join, read, set what the others see of you, leave, and the circle's live view.
    /// Every call goes to the server `configure()` syncs to, with the device credential of the
    /// sync configuration (refreshed on a 401 as uploads are). See <doc:Circles>.
    public nonisolated var circles: CircleClient { CircleClient(beekon: self) }
}

/// Circles on `beekon-ingest` (`/v1/me`, `/v1/circles/…`), called with this install's device
/// credential: its person is the `person` of the enrolment code the install was enrolled with.
/// Obtain it as ``Beekon/circles``. Every message is BeekonWire's (`WireCircleView`, …), the
/// code the server writes them with. Failures are ``BeekonError``s:
/// ``BeekonError/serverRefused(status:code:message:)`` for a refusal (a circle you are not, or no
/// longer, a member of is `404 not_found`), ``BeekonError/serverUnavailable(_:)`` for what may
/// work later, ``BeekonError/invalidConfiguration(_:)`` when sync with a credential is not configured.
public struct CircleClient: Sendable {
    let beekon: Beekon
    /// The deadline of each request (default 30 s).
    public var timeout: Duration = .seconds(30)

    /// Creates a client of `beekon`'s server (the same as ``Beekon/circles``).
    public init(beekon: Beekon) { self.beekon = beekon }

    /// The person this install acts for, and the name they show (`GET /v1/me`).
    public func me() async throws(BeekonError) -> WirePerson {
        try WirePerson.decode(await send("GET", "/v1/me"), as: "person")
    }

    /// The circles you belong to, newest first (`GET /v1/circles`); `limit` (1 … 1,000) bounds the
    /// list (the server's default otherwise) and `truncated` says when there are more.
    public func list(limit: Int? = nil) async throws(BeekonError) -> WireCircleList {
        try WireCircleList.decode(await send("GET", "/v1/circles" + (limit.map { "?limit=\($0)" } ?? "")), as: "circle list")
    }

    /// Creates a circle you own (`POST /v1/circles`); its view (you as its only member).
    public func create(name: String) async throws(BeekonError) -> WireCircleView {
        try WireCircleView.decode(await send("POST", "/v1/circles", WireCircleCreate(name: name).encoded()), as: "circle")
    }

    /// The circle as you see it (`GET /v1/circles/{id}`): each member's state, "last seen", the
    /// newest fix of each device at the precision the member allows, and the state of the
    /// circle's latest wake-up request to it. Reading does not wake anyone; ``wake(_:)`` and
    /// ``live(_:idleTimeout:)`` do.
    public func circle(_ id: String) async throws(BeekonError) -> WireCircleView {
        try WireCircleView.decode(await send("GET", try Self.path(id)), as: "circle")
    }

    /// Asks the other members' devices for a fresh fix now (`POST /v1/circles/{id}/wake`); the
    /// view with what was asked of each device (`WireCircleDevice/wake`).
    public func wake(_ id: String) async throws(BeekonError) -> WireCircleView {
        try WireCircleView.decode(await send("POST", try Self.path(id) + "/wake"), as: "circle")
    }

    /// A one-use invitation to a circle you own (`POST /v1/circles/{id}/invitations`): hand its
    /// `WireCircleInvitation/code` to the person you invite, who calls ``join(code:)``.
    /// `expiresIn` is 60 s … 30 days (default 7 days).
    public func invite(to id: String, expiresIn: Duration? = nil) async throws(BeekonError) -> WireCircleInvitation {
        let request = WireCircleInvitationRequest(expiresInSeconds: expiresIn.map { Int($0.components.seconds) })
        return try WireCircleInvitation.decode(await send("POST", try Self.path(id) + "/invitations", request.encoded()), as: "invitation")
    }

    /// Accepts an invitation (`POST /v1/circles/join`); `joined` is false when you were a member
    /// already. An unknown, expired or used code is `400 invalid_invitation`.
    public func join(code: String) async throws(BeekonError) -> WireCircleJoin {
        try WireCircleJoin.decode(await send("POST", "/v1/circles/join", WireCircleJoinRequest(code: code).encoded()), as: "join")
    }

    /// Sets what the other members see of you in circle `id` (precision, hours, paused); the
    /// setting the server stored. Paused, they see "paused" and no position, and your devices are
    /// not woken for them.
    public func setSharing(_ sharing: WireCircleSharing, in id: String) async throws(BeekonError) -> WireCircleSharing {
        let path = try Self.path(id) + "/members/" + Self.segment(try await me().person) + "/sharing"
        return try WireCircleSharing.decode(await send("PUT", path, sharing.encoded()), as: "sharing")
    }

    /// Leaves circle `id`: your devices stop being seen at once (open views of it end).
    public func leave(_ id: String) async throws(BeekonError) {
        try await remove(try await me().person, from: id)
    }

    /// Removes `person` from circle `id` (you own it, or `person` is you).
    public func remove(_ person: String, from id: String) async throws(BeekonError) {
        _ = try await send("DELETE", try Self.path(id) + "/members/" + Self.segment(person))
    }

    /// Deletes circle `id`, which you own.
    public func delete(_ id: String) async throws(BeekonError) {
        _ = try await send("DELETE", try Self.path(id))
    }

    // MARK: The exchange

    /// Sends one request with the device credential; the 2xx body, or the failure as a ``BeekonError``.
    func send(_ method: String, _ path: String, _ body: Data = Data()) async throws(BeekonError) -> Data {
        let engine = try await engine()
        switch await engine.deviceExchange(path: path, method: method, body: body, timeout: timeout) {
        case .answered(let response) where (200..<300).contains(response.status): return response.body
        case .answered(let response): throw Self.failure(response)
        case .noCredential(dead: true):
            throw .serverRefused(status: 401, code: "credentials_dead", message: "the device's credential was refused; enrol again")
        case .noCredential(dead: false): throw .serverUnavailable("no usable device credential right now")
        case .failed(let error): throw .serverUnavailable(error.map { "\($0)" } ?? "the request could not be built from the sync URL")
        }
    }

    /// The sync engine, which holds the device credential.
    func engine() async throws(BeekonError) -> SyncEngine {
        guard let engine = try await beekon.applySync(), engine.auth != nil else {
            throw .invalidConfiguration("circles need sync with a device credential: configure(sync: SyncConfig(url:auth:)) first")
        }
        return engine
    }

    /// A non-2xx answer as the SDK's error: 4xx (but 429) is a refusal, the rest may pass.
    static func failure(_ response: HTTPResponse) -> BeekonError {
        struct Body: Decodable {
            var error: String?
            var message: String?
        }
        let body = try? JSONDecoder().decode(Body.self, from: response.body)
        let message = body?.message ?? String(decoding: response.body.prefix(200), as: UTF8.self)
        if (400..<500).contains(response.status), response.status != 429 {
            return .serverRefused(status: response.status, code: body?.error ?? "http_\(response.status)", message: message)
        }
        return .serverUnavailable("HTTP \(response.status): \(message)")
    }

    /// `/v1/circles/{id}` for a well-formed circle id.
    static func path(_ id: String) throws(BeekonError) -> String {
        guard WireCircles.isCircleID(id) else {
            throw .invalidConfiguration("circle id: cir_ and 24 hex digits, got \"\(id)\"")
        }
        return "/v1/circles/" + id
    }

    /// `text` percent-encoded as one path segment.
    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))
            ?? text
    }
}

extension BeekonWire.WireDecodingError {
    /// A 2xx body that is not the message it should be, as the SDK's error.
    func asBeekonError(_ what: String) -> BeekonError { .serverUnavailable("the server's \(what) could not be read: \(self)") }
}

/// Reads a 2xx body as its message, a misfit as ``BeekonError/serverUnavailable(_:)``.
protocol CircleAnswer {
    static func decode(_ data: Data) throws(WireDecodingError) -> Self
}

extension CircleAnswer {
    static func decode(_ data: Data, as what: String) throws(BeekonError) -> Self {
        do { return try decode(data) } catch { throw error.asBeekonError(what) }
    }
}

extension WirePerson: CircleAnswer {}
extension WireCircleList: CircleAnswer {}
extension WireCircleView: CircleAnswer {}
extension WireCircleInvitation: CircleAnswer {}
extension WireCircleJoin: CircleAnswer {}
extension WireCircleSharing: CircleAnswer {}
