import AsyncHTTPClient
import BeekonPrimitives
import BeekonWire
import Foundation
import Logging
import NIOHTTP1
import _CryptoExtras

/// Sends high-priority data messages with FCM's HTTP v1 API (SPEC XR-6): a service-account
/// JWT (RS256) is exchanged at the account's `token_uri` for an OAuth access token, which
/// is reused until five minutes before it expires (by the injected clock).
final class FCMSender: PushSender {
    let name = "fcm"
    private let client: HTTPClient
    private let account: ServiceAccount?
    /// The key's DER (the key type itself is not `Sendable`).
    private let key: Data?
    private let endpoint: String
    private let now: @Sendable () -> Date
    private let gate: PushSenderGate
    private let state = Locked(State())
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The fields of a Google service-account key file that FCM needs.
    struct ServiceAccount: Decodable {
        var projectId: String
        var privateKeyId: String?
        var privateKey: String
        var clientEmail: String
        var tokenURI: String

        enum CodingKeys: String, CodingKey {
            case projectId = "project_id"
            case privateKeyId = "private_key_id"
            case privateKey = "private_key"
            case clientEmail = "client_email"
            case tokenURI = "token_uri"
        }
    }

    private struct State {
        var accessToken: String?
        var expiresAtMillis: Int64 = 0
    }

    /// Reads the service account; one that cannot be read leaves the sender disabled (one error logged).
    init(_ config: FCMConfiguration, client: HTTPClient, now: @escaping @Sendable () -> Date, logger: Logger) {
        self.client = client
        endpoint = config.endpoint
        self.now = now
        gate = PushSenderGate(provider: "FCM", remedy: "a valid service account", logger: logger)
        let loaded = gate.load("the service account at \(config.serviceAccountPath) is not a readable Google service-account key") {
            let a = try JSONDecoder().decode(ServiceAccount.self, from: Data(contentsOf: URL(fileURLWithPath: config.serviceAccountPath)))
            return (account: a, key: try _RSA.Signing.PrivateKey(pemRepresentation: a.privateKey).derRepresentation)
        }
        account = loaded?.account
        key = loaded?.key
    }

    /// Why the sender is disabled, if it is.
    var disabledReason: String? { gate.disabledReason }

    private func disable(_ why: String) { gate.disable(why) }

    private var nowMillis: Int64 { WireTimestamp(now()).millis }

    /// An access token, or what keeps the push from being sent.
    enum AccessToken {
        case token(String)
        case failed(PushOutcome)
    }

    /// A cached access token, or a new one from the token endpoint; a failure outcome otherwise.
    func accessToken(forceNew: Bool = false) async -> AccessToken {
        let nowMs = nowMillis
        if !forceNew, let cached = state.withLock({ s in s.expiresAtMillis - nowMs > 300_000 ? s.accessToken : nil }) {
            return .token(cached)
        }
        guard let account, let key else { return .failed(.disabled(reason: disabledReason ?? "no service account")) }
        let assertion: String
        do {
            assertion = try PushJWT.serviceAccount(
                key: _RSA.Signing.PrivateKey(derRepresentation: key), keyId: account.privateKeyId, email: account.clientEmail,
                scope: Self.scope, audience: account.tokenURI,
                issuedAt: nowMs / 1000)
        } catch {
            disable("the service-account assertion could not be signed: \(error)")
            return .failed(.disabled(reason: disabledReason ?? "\(error)"))
        }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response: (status: Int, headers: HTTPHeaders, body: [UInt8])
        do {
            response = try await PushHTTPClient.post(
                client, url: account.tokenURI, headers: [("content-type", "application/x-www-form-urlencoded")], body: Array(form.utf8))
        } catch {
            return .failed(.retry(reason: "fcm token endpoint unreachable: \(error)", after: nil))
        }
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        guard response.status == 200, let token = object?["access_token"] as? String else {
            let code = object?["error"] as? String ?? ""
            let why = "fcm token endpoint \(response.status) \(code)"
            // RFC 6749 §5.2: invalid_grant / invalid_client / unauthorized_client mean the key or account is wrong.
            if [400, 401, 403].contains(response.status) {
                disable(why)
                return .failed(.disabled(reason: why))
            }
            return .failed(.retry(reason: why, after: nil))
        }
        let lifetime = (object?["expires_in"] as? NSNumber)?.int64Value ?? 3600
        state.withLock { s in
            s.accessToken = token
            s.expiresAtMillis = nowMs + lifetime * 1000
        }
        return .token(token)
    }

    func send(_ message: PushMessage, to token: PushToken) async -> PushOutcome {
        if let why = disabledReason { return .disabled(reason: why) }
        guard let account else { return .disabled(reason: "no service account") }
        for attempt in 0..<2 {
            let access: String
            switch await accessToken(forceNew: attempt > 0) {
            case .token(let t): access = t
            case .failed(let outcome): return outcome
            }
            let response: (status: Int, headers: HTTPHeaders, body: [UInt8])
            do {
                response = try await PushHTTPClient.post(
                    client, url: "\(endpoint)/v1/projects/\(account.projectId)/messages:send",
                    headers: [("authorization", "Bearer \(access)"), ("content-type", "application/json")],
                    body: Self.body(message, token: token.token, nowMillis: nowMillis))
            } catch {
                return .retry(reason: "fcm unreachable: \(error)", after: nil)
            }
            // 401: the access token was refused (revoked or expired early): one retry with a new one.
            if response.status == 401, attempt == 0 { continue }
            let retryAfter = response.headers.first(name: "retry-after").flatMap(Int.init).map { Duration.seconds($0) }
            let outcome = Self.outcome(status: response.status, errorCode: Self.errorCode(response.body), retryAfter: retryAfter)
            if case .disabled(let why) = outcome { disable(why) }
            return outcome
        }
        return .failed(reason: "fcm 401 twice")
    }

    /// The `messages:send` body of `message`. A locate request is a high-priority data message
    /// (the app handles it); a nudge is a notification message, which Google's "Firebase Cloud
    /// Messaging message types" describes as displayed by the FCM SDK "to end-user devices on
    /// behalf of the client app when it's running in the background" — an app that stopped
    /// reporting is not in the foreground.
    static func body(_ message: PushMessage, token: String, nowMillis: Int64) -> [UInt8] {
        switch message {
        case .locate(let id, _): return PushPayload.fcm(requestId: id, token: token)
        case .nudge(let nudge, _, let expires):
            return PushPayload.fcmNudge(nudge, token: token, ttlSeconds: max(0, (expires - nowMillis) / 1000))
        }
    }

    /// The FCM error code of an error body: `error.details[].errorCode` (`UNREGISTERED`, …),
    /// else `error.status`.
    static func errorCode(_ body: [UInt8]) -> String? {
        guard let error = (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["error"] as? [String: Any] else {
            return nil
        }
        for detail in error["details"] as? [[String: Any]] ?? [] {
            if let code = detail["errorCode"] as? String { return code }
        }
        return error["status"] as? String
    }

    /// What a response means, as Google's FCM `ErrorCode` reference documents:
    ///
    /// - `UNREGISTERED` (404): "App instance was unregistered from FCM. This usually means that the
    ///   token used is no longer valid and a new one must be used." — the token is dropped;
    ///   `SENDER_ID_MISMATCH` (403): the token belongs to another project — dropped too.
    /// - `QUOTA_EXCEEDED` (429), `UNAVAILABLE` (503), `INTERNAL` (500): retried with exponential
    ///   back-off, honouring `Retry-After`.
    /// - `THIRD_PARTY_AUTH_ERROR` / `PERMISSION_DENIED` (401/403): the account cannot send — disabled.
    /// - `INVALID_ARGUMENT` (400) and anything else: this push fails.
    static func outcome(status: Int, errorCode: String?, retryAfter: Duration?) -> PushOutcome {
        let what = "fcm \(status)" + (errorCode.map { " \($0)" } ?? "")
        switch (status, errorCode) {
        case (200, _): return .sent
        case (_, "UNREGISTERED"), (_, "SENDER_ID_MISMATCH"): return .tokenInvalid(reason: what)
        case (429, _), (500, _), (503, _): return .retry(reason: what, after: retryAfter)
        case (401, _), (403, _): return .disabled(reason: what)
        default: return .failed(reason: what)
        }
    }
}
