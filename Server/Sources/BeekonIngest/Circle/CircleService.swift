import BeekonPrimitives
import BeekonWire
import Crypto
import Foundation
import Hummingbird

/// How often opening a circle's map may wake its members' devices (issue 52).
package struct CircleWakePolicy: Sendable, Equatable {
    /// Per device, across every requester: Apple asks that background (silent) pushes stay
    /// infrequent — no more than two or three an hour — so by default one wake-up per 20
    /// minutes and none back to back (3 an hour). The existing `POST …/locate` limit (one a
    /// minute, 3 back to back) is an operator's, not a family map's.
    package var perDevice = LocateRateLimit(intervalSeconds: 1_200, burst: 1)
    /// Per viewer (a person, or `admin`): wake-ups of any circle, one per 5 minutes and 3 back
    /// to back, so that opening and closing the map in a loop wakes nobody more.
    package var perViewer = LocateRateLimit(intervalSeconds: 300, burst: 3)

    /// The default policy.
    package init() {}
}

/// Who calls a circle route: an admin key (or auth off), or a person through one of their
/// devices' access tokens.
enum CircleCaller: Sendable, Equatable {
    case admin
    case person(String)

    /// The person, nil for an admin.
    var person: String? {
        if case .person(let p) = self { return p }
        return nil
    }

    /// Who a wake-up is counted against.
    var viewerKey: String { person.map { "person:" + $0 } ?? "admin" }
}

/// What a wake-up did for one device of another member.
enum WakeOutcome: String, Sendable, Equatable {
    /// A new locate request was made (and pushed when the device has a push token).
    case requested
    /// The device had an open request already: no second one (several viewers at once).
    case coalesced
    /// The device's wake-up budget is spent (``CircleWakePolicy/perDevice``).
    case rateLimited = "rate_limited"
    /// The viewer's budget is spent (``CircleWakePolicy/perViewer``): nobody was woken.
    case viewerLimited = "viewer_limited"
    /// The member paused sharing, or it is outside their hours: not asked.
    case notAsked = "not_asked"
}

/// People and circles (issue 52): who a caller is, the checks of every circle route, the
/// wake-up of a circle's devices, and whether an open stream of a circle still holds.
final class CircleService: Sendable {
    let store: any CircleStore
    let auth: Authenticator
    let locates: LocateService
    let pushes: PushDispatcher?
    let policy: CircleWakePolicy
    let limits: CircleLimits
    let now: @Sendable () -> Date
    /// Each viewer's recent wake-up times (Unix ms), judged by ``CircleWakePolicy/perViewer``.
    private let viewerWakes = Locked([String: [Int64]]())
    /// Each circle's version as last read, and when (open streams re-check every 250 ms).
    private let versions = Locked([String: (version: Int64?, at: ContinuousClock.Instant)]())

    /// A stream's key in the live hub: `circle:` + id + `@` + the version it was opened at.
    static let streamPrefix = "circle:"

    init(
        store: any CircleStore, auth: Authenticator, locates: LocateService, pushes: PushDispatcher?, policy: CircleWakePolicy,
        limits: CircleLimits = CircleLimits(), now: @escaping @Sendable () -> Date
    ) {
        self.store = store
        self.auth = auth
        self.locates = locates
        self.pushes = pushes
        self.policy = policy
        self.limits = limits
        self.now = now
    }

    var nowMillis: Int64 { WireTimestamp(now()).millis }

    // MARK: Callers

    /// The caller of a circle route, or the refusal: 401 without a valid credential (a share
    /// token included), 403 for an enroller key or a device credential bound to no person,
    /// 401 `device_revoked` for a revoked one.
    func caller(_ request: Request) async -> CallerDecision {
        switch auth.principal(of: request.headers) {
        case .apiKey?, .anonymous?: return .caller(.admin)
        case .enroller?: return .refused(Authenticator.enrollerOnly())
        case nil:
            return .refused(APIResponse.unauthorized("circles need a person's device access token or an admin key"))
        case .device(let subject)?:
            let bound: DevicePerson?
            do {
                bound = try await store.devicePerson(subject: subject)
            } catch {
                return .refused(APIResponse.unavailable("the credential could not be checked; retry later"))
            }
            guard let bound else {
                return .refused(Self.noPerson())
            }
            if bound.revoked {
                return .refused(APIResponse.unauthorized("this device was revoked by an admin", error: "device_revoked"))
            }
            guard let person = bound.person else { return .refused(Self.noPerson()) }
            return .caller(.person(person))
        }
    }

    static func noPerson() -> Response {
        APIResponse.error(
            .forbidden, "forbidden", "this device credential belongs to no person: enrol the install with a code bound to a person")
    }

    // MARK: Streams

    /// The hub key of a stream of `circle` opened at `version`.
    static func streamKey(_ circle: String, version: Int64) -> String { "\(streamPrefix)\(circle)@\(version)" }

    /// Whether a stream key still holds: its circle exists at the version it was opened at (any
    /// change of members or sharing ends the circle's streams; their viewers reconnect with the
    /// new rules, or are refused). Read at most every 250 ms per circle on this instance.
    func isActive(streamKey key: String) async -> Bool {
        guard key.hasPrefix(Self.streamPrefix), let at = key.lastIndex(of: "@"), let opened = Int64(key[key.index(after: at)...])
        else { return false }
        let id = String(key[key.index(key.startIndex, offsetBy: Self.streamPrefix.count)..<at])
        if let cached = versions.withLock({ $0[id] }), ContinuousClock.now - cached.at < .milliseconds(250) {
            return cached.version == opened
        }
        guard let version = try? await store.circleVersion(id: id) else { return true }  // unreadable: judged again next time
        versions.withLock { $0[id] = (version, ContinuousClock.now) }
        return version == opened
    }

    /// Forgets the cached version of a circle this instance changed (its streams close at once).
    func changed(_ circle: String) {
        _ = versions.withLock { $0.removeValue(forKey: circle) }
    }

    // MARK: What a viewer sees

    /// The scope of `viewer` (nil: an admin) on a circle: the members' devices, each with its
    /// member's sharing as its rules — except the viewer's own, seen whole, and a paused
    /// member's, not seen at all.
    static func scope(_ detail: CircleDetail, viewer: String?) -> ViewerScope {
        var devices = Set<UUID>()
        var rules: [UUID: ShareScope] = [:]
        for m in detail.members {
            let own = m.person == viewer
            guard own || m.sharing.pausedMillis == nil else { continue }
            for d in m.devices {
                devices.insert(d)
                rules[d] = own ? ShareScope(live: true) : m.sharing.scope
            }
        }
        return ViewerScope(devices: devices, rules: ShareScope(live: true), shareId: requester(detail.circle.id), deviceRules: rules)
    }

    /// Who a circle's wake-ups are requested by (a locate request's `requested_by`).
    static func requester(_ circle: String) -> String { streamPrefix + circle }

    // MARK: Waking

    /// Asks every other member's devices for a fresh fix (issue 52): one locate request per
    /// device, pushed when it has a push token; none for a member paused or outside their
    /// hours, none while the device has an open request (coalesced), none past the device's
    /// or the viewer's budget. Returns what happened per device.
    func wake(_ detail: CircleDetail, caller: CircleCaller) async throws(StoreError) -> [UUID: WakeOutcome] {
        let nowMs = nowMillis
        var out: [UUID: WakeOutcome] = [:]
        var targets: [UUID] = []
        for m in detail.members where m.person != caller.person {
            let asked = m.sharing.pausedMillis == nil && m.sharing.scope.admits(millis: nowMs, nowMillis: nowMs)
            for d in m.devices {
                if asked { targets.append(d) } else { out[d] = .notAsked }
            }
        }
        guard !targets.isEmpty else { return out }
        guard takeViewerWake(caller.viewerKey, nowMillis: nowMs) else {
            for d in targets { out[d] = .viewerLimited }
            return out
        }
        let by = Self.requester(detail.circle.id)
        for d in targets {
            if try await locates.hasOpenRequest(for: d) {
                out[d] = .coalesced
                continue
            }
            switch try await locates.create(installId: d, requestedBy: by, limit: policy.perDevice) {
            case .created(let r):
                pushes?.enqueue(r)
                out[d] = .requested
            case .limited:
                out[d] = .rateLimited
            }
        }
        return out
    }

    /// Spends one of the viewer's wake-ups at `nowMillis`; false when none is left.
    private func takeViewerWake(_ viewer: String, nowMillis: Int64) -> Bool {
        let limit = policy.perViewer
        return viewerWakes.withLock { all in
            let recent = (all[viewer] ?? []).filter { $0 > nowMillis - limit.horizonMillis }
            guard limit.check(previous: recent, nowMillis: nowMillis).allowed else {
                all[viewer] = recent
                return false
            }
            all[viewer] = recent + [nowMillis]
            // Bounded: viewers with nothing in the window are forgotten.
            if all.count > 10_000 { all = all.filter { !$0.value.isEmpty && $0.value.last! > nowMillis - limit.horizonMillis } }
            return true
        }
    }

    // MARK: Ids and codes

    /// A new circle id: `cir_` and 24 hex digits.
    static func newCircleID() -> String { "cir_" + ShareService.randomHex(12) }

    /// Whether `text` is a circle id.
    static func isCircleID(_ text: String) -> Bool {
        text.utf8.count == 28 && text.hasPrefix("cir_") && Hex.decode(String(text.dropFirst(4))) != nil
    }

    /// A new invitation code (shown once; only its SHA-256 is stored).
    static func newInvitationCode() -> String {
        "bci1." + Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) })
    }

    static func hash(_ code: String) -> String { Hex.encode(SHA256.hash(data: Array(code.utf8))) }
}

/// The caller of a circle route, or the refusal to send.
enum CallerDecision: Sendable {
    case caller(CircleCaller)
    case refused(Response)
}
