import Crypto
import Foundation
import Hummingbird

/// Who made a request.
package enum Principal: Sendable, Equatable {
    /// Auth is off.
    case anonymous
    /// A static API key: may upload and read.
    case apiKey
    /// An access token from `/oauth/token`: may upload.
    case device(subject: String)
    /// An enroller key (issue 52, the app's own backend): may create one-use enrollment codes
    /// bound to a person, and nothing else.
    case enroller

    /// The value recorded with a batch.
    var recorded: String? {
        switch self {
        case .anonymous: return nil
        case .apiKey: return "api-key"
        case .enroller: return "enroller"
        case .device(let subject): return subject
        }
    }
}

/// Checks credentials: `Authorization: Bearer <key-or-token>`, `Authorization: <token>`
/// (the SDK's `raw` strategy) or `X-API-Key: <key>`.
package struct Authenticator: Sendable {
    /// Whether credentials are enforced.
    package let required: Bool
    private let keyDigests: [[UInt8]]
    private let enrollerDigests: [[UInt8]]
    private let tokens: TokenService

    /// Creates an authenticator for the given admin keys, enroller keys and token service.
    package init(required: Bool, apiKeys: [String], enrollerKeys: [String] = [], tokens: TokenService) {
        self.required = required
        self.keyDigests = apiKeys.map { Array(SHA256.hash(data: Array($0.utf8))) }
        self.enrollerDigests = enrollerKeys.map { Array(SHA256.hash(data: Array($0.utf8))) }
        self.tokens = tokens
    }

    /// The principal of a request; nil when auth is required and no valid credential was sent.
    package func principal(of headers: HTTPFields) -> Principal? {
        guard required else { return .anonymous }
        var candidates: [String] = []
        if let key = headers.first(where: { $0.name.canonicalName == "x-api-key" })?.value {
            candidates.append(String(Self.trimmed(key[...])))
        }
        if let auth = headers[.authorization] {
            candidates.append(Self.credential(ofAuthorization: auth))
        }
        for candidate in candidates where !candidate.isEmpty {
            if Self.matches(candidate, keyDigests) { return .apiKey }
            if Self.matches(candidate, enrollerDigests) { return .enroller }
            if let subject = tokens.verify(accessToken: candidate) { return .device(subject: subject) }
        }
        return nil
    }

    /// The bearer credential of a request (`Authorization: Bearer <t>`, a bare `Authorization`, or `X-API-Key`).
    static func bearer(_ headers: HTTPFields) -> String? {
        if let auth = headers[.authorization].map(Self.credential(ofAuthorization:)), !auth.isEmpty { return auth }
        return headers.first(where: { $0.name.canonicalName == "x-api-key" }).map { String(Self.trimmed($0.value[...])) }
    }

    /// The credential in an `Authorization` value: after `Bearer ` (any case) or the whole value,
    /// trimmed.
    static func credential(ofAuthorization value: String) -> String {
        let auth = trimmed(value[...])
        let scheme = "bearer ".utf8
        func lowered(_ c: UInt8) -> UInt8 { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c | 0x20 : c }
        guard auth.utf8.count >= scheme.count, zip(auth.utf8, scheme).allSatisfy({ lowered($0) == $1 }) else { return String(auth) }
        return String(trimmed(auth.dropFirst(scheme.count)))
    }

    /// `text` without leading and trailing tabs and space separators (what Foundation's
    /// `CharacterSet.whitespaces` trims), without Foundation's cost on every request.
    static func trimmed(_ text: Substring) -> Substring {
        func isSpace(_ s: Unicode.Scalar) -> Bool {
            s == " " || s == "\t" || (s.value > 0x7F && s.properties.generalCategory == .spaceSeparator)
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else {
            return Substring()
        }
        return text[first...last]
    }

    /// Whether `principal` may act for `install` (upload as it, poll its commands, answer its
    /// locate requests). Admin keys and auth off act for any install; a device credential only
    /// for the install it is bound to — bound on first use when it was issued without one —
    /// and not once an admin revoked it. Nil when allowed, else the refusal to send:
    /// 403 `wrong_install`, 401 `device_revoked` (the SDK then refreshes, which fails for good),
    /// 503 when the binding could not be read.
    func refusal(_ principal: Principal, actingFor install: UUID) async -> Response? {
        if principal == .enroller { return Self.enrollerOnly() }
        guard case .device(let subject) = principal else { return nil }
        let bound: DeviceBinding
        do {
            bound = try await tokens.binding(subject: subject, claim: install)
        } catch {
            return APIResponse.unavailable("the device credential could not be checked; retry later")
        }
        if bound.revoked { return APIResponse.unauthorized("this device was revoked by an admin", error: "device_revoked") }
        guard bound.installId == install else {
            return APIResponse.error(.forbidden, "wrong_install", "this credential belongs to another install")
        }
        return nil
    }

    /// 403 for an enroller key on any route but `POST /v1/enrollments`.
    static func enrollerOnly() -> Response {
        APIResponse.error(.forbidden, "forbidden", "an enroller key may only create enrollment codes")
    }

    /// Whether a device credential still holds (not revoked); true for every other principal.
    func stillValid(_ principal: Principal, for install: UUID) async -> Bool {
        guard case .device(let subject) = principal else { return true }
        guard let bound = try? await tokens.binding(subject: subject, claim: install) else { return true }
        return !bound.revoked && bound.installId == install
    }

    /// Whether `headers` carry a valid API key (whatever the auth mode).
    func hasAdminKey(_ headers: HTTPFields) -> Bool {
        guard required else { return true }
        return principal(of: headers) == .apiKey
    }

    private static func matches(_ candidate: String, _ keyDigests: [[UInt8]]) -> Bool {
        let digest = Array(SHA256.hash(data: Array(candidate.utf8)))
        // Compare digests without an early exit, so timing reveals nothing about the key.
        var match = false
        for known in keyDigests {
            var diff: UInt8 = 0
            for i in 0..<known.count { diff |= known[i] ^ digest[i] }
            match = match || diff == 0
        }
        return match
    }
}
