import AsyncHTTPClient
import BeekonPrimitives
import BeekonWire
import Crypto
import Foundation
import Logging
import NIOHTTP1

/// Sends background pushes to APNs with token-based authentication (SPEC XR-6): an ES256
/// provider token signed with the team's `.p8` key, over HTTP/2.
///
/// Apple, "Establishing a token-based connection to APNs": "Refresh your token no more than
/// once every 20 minutes and no less than once every 60 minutes." The token is made once and
/// reused until it is `refreshAfterSeconds` (50 min) old, by the injected clock.
final class APNsSender: PushSender {
    let name = "apns"
    private let client: HTTPClient
    /// The key's raw scalar (the key type itself is not `Sendable`).
    private let key: Data?
    private let keyId: String
    private let teamId: String
    private let productionURL: String
    private let sandboxURL: String
    private let topics: Set<String>
    private let now: @Sendable () -> Date
    private let gate: PushSenderGate
    private let state = Locked(State())
    /// Age (seconds) at which the provider token is replaced.
    static let refreshAfterSeconds: Int64 = 50 * 60

    private struct State {
        var token: String?
        var issuedAt: Int64 = 0
    }

    /// Reads the key; a key that cannot be read leaves the sender disabled (one error logged).
    init(_ config: APNsConfiguration, client: HTTPClient, now: @escaping @Sendable () -> Date, logger: Logger) {
        self.client = client
        keyId = config.keyId
        teamId = config.teamId
        productionURL = config.productionURL
        sandboxURL = config.sandboxURL
        topics = config.topics
        self.now = now
        gate = PushSenderGate(provider: "APNs", remedy: "a valid key", logger: logger)
        key = gate.load("the key at \(config.keyPath) is not a readable PKCS#8 P-256 (.p8) key") {
            try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: config.keyPath, encoding: .utf8)).rawRepresentation
        }
    }

    /// Why the sender is disabled, if it is.
    var disabledReason: String? { gate.disabledReason }

    private func disable(_ why: String) { gate.disable(why) }

    /// The current provider token, made anew when it is 50 minutes old (or was refused as expired).
    func providerToken(forceNew: Bool = false) throws -> String {
        let nowSeconds = Int64(now().timeIntervalSince1970)
        return try state.withLock { s -> Result<String, any Error> in
            if !forceNew, let t = s.token, nowSeconds - s.issuedAt < Self.refreshAfterSeconds, nowSeconds >= s.issuedAt {
                return .success(t)
            }
            guard let key else { return .failure(StoreError.unavailable("no APNs key")) }
            do {
                let t = try PushJWT.apns(
                    key: P256.Signing.PrivateKey(rawRepresentation: key), keyId: keyId, teamId: teamId, issuedAt: nowSeconds)
                s.token = t
                s.issuedAt = nowSeconds
                return .success(t)
            } catch {
                return .failure(error)
            }
        }.get()
    }

    func send(_ message: PushMessage, to token: PushToken) async -> PushOutcome {
        if let why = disabledReason { return .disabled(reason: why) }
        guard let topic = token.topic else { return .tokenInvalid(reason: "apns token without a topic") }
        // A token kept from before the topics were pinned, for an app this server does not push to (issue 50).
        guard topics.contains(topic) else { return .tokenInvalid(reason: "apns topic \(topic.prefix(100)) is not configured") }
        let base = token.environment == .sandbox ? sandboxURL : productionURL
        for attempt in 0..<2 {
            let jwt: String
            do {
                jwt = try providerToken(forceNew: attempt > 0)
            } catch {
                disable("the provider token could not be signed: \(error)")
                return .disabled(reason: disabledReason ?? "\(error)")
            }
            let response: (status: Int, headers: HTTPHeaders, body: [UInt8])
            do {
                response = try await PushHTTPClient.post(
                    client, url: "\(base)/3/device/\(token.token)",
                    headers: [("authorization", "bearer \(jwt)"), ("apns-topic", topic)] + Self.headers(message)
                        + [("content-type", "application/json")],
                    body: Self.payload(message))
            } catch {
                return .retry(reason: "apns unreachable: \(error)", after: nil)
            }
            let reason = PushHTTPClient.field(response.body, "reason")
            let outcome = Self.outcome(status: response.status, reason: reason)
            // "ExpiredProviderToken: The provider token is stale and a new token should be generated."
            if response.status == 403, reason == "ExpiredProviderToken", attempt == 0 { continue }
            if case .disabled(let why) = outcome {
                disable(why)
                return .disabled(reason: why)
            }
            return outcome
        }
        return .failed(reason: "apns 403 ExpiredProviderToken twice")
    }

    /// The headers that say what kind of push `message` is, as Apple's "Sending notification
    /// requests to APNs" sets them out for `apns-push-type`:
    ///
    /// - A locate request is a background push. "Use the background push type for notifications
    ///   that deliver content in the background, and don't trigger any user interactions. [...]
    ///   Always use priority 5. Using priority 10 is an error." Its payload's `aps` holds only
    ///   `content-available` (a background notification's "aps dictionary must not contain any
    ///   keys that would trigger user interactions").
    /// - A nudge is an alert. "Use the alert push type for notifications that trigger a user
    ///   interaction—for example, an alert, badge, or sound." Priority: "If the notification
    ///   requires immediate action from the user, set notification priority to 10; otherwise use
    ///   5." Re-opening an app is not urgent: 5. `apns-collapse-id`: "Multiple notifications with
    ///   the same collapse identifier are displayed to the user as a single notification", so a
    ///   second day's nudge replaces the first instead of piling up.
    static func headers(_ message: PushMessage) -> [(String, String)] {
        let common = [("apns-id", message.id.wireString), ("apns-expiration", String(max(0, message.expiresAtMillis / 1000)))]
        switch message {
        case .locate: return [("apns-push-type", "background"), ("apns-priority", "5")] + common
        case .nudge:
            return [("apns-push-type", "alert"), ("apns-priority", "5"), ("apns-collapse-id", WireNudgePush.threadID)] + common
        }
    }

    /// The request body of `message`: BeekonWire's payload of its kind.
    static func payload(_ message: PushMessage) -> [UInt8] {
        switch message {
        case .locate(let id, _): return PushPayload.apns(requestId: id)
        case .nudge(let nudge, _, _): return [UInt8](nudge.apnsPayload)
        }
    }

    /// What a response means, as Apple's "Handling notification responses from APNs" documents:
    ///
    /// - 200 "Success."
    /// - 400 "Bad request." `BadDeviceToken` ("The specified device token is invalid. Verify that the
    ///   request contains a valid token and that the token matches the environment.") and
    ///   `DeviceTokenNotForTopic` drop the token; other reasons fail this push only.
    /// - 403 "There was an error with the certificate or with the provider's authentication token."
    ///   `InvalidProviderToken` / `MissingProviderToken` / `BadCertificate*` mean the key, key id or
    ///   team id is wrong for every push: the sender is disabled. `ExpiredProviderToken` gets one
    ///   retry with a new token (in `send`).
    /// - 410 "The device token is no longer active for the topic." (`Unregistered`, `ExpiredToken`): drop it.
    /// - 413 "The notification payload was too large.": this push fails (ours is ~120 bytes).
    /// - 429 "The server received too many requests for the same device token." and 500 "Internal
    ///   server error." / 503 "The server is shutting down and unavailable.": retried with back-off —
    ///   "While retrying, you may employ a back-off technique. [...] Don't retry notification
    ///   responses with the error code BadDeviceToken, DeviceTokenNotForTopic, Forbidden,
    ///   ExpiredToken, Unregistered, or PayloadTooLarge. You can retry with a delay, if you get the
    ///   error code TooManyRequests." A locate request expires within minutes, so the retries stop
    ///   at its expiry (Apple's 15-minute wait for 5xx would always pass it).
    static func outcome(status: Int, reason: String?) -> PushOutcome {
        let what = "apns \(status)" + (reason.map { " \($0)" } ?? "")
        switch status {
        case 200: return .sent
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic": return .tokenInvalid(reason: what)
        case 403
        where ["InvalidProviderToken", "MissingProviderToken", "BadCertificate", "BadCertificateEnvironment"].contains(reason ?? ""):
            return .disabled(reason: what)
        case 410: return .tokenInvalid(reason: what)
        case 429, 500, 503: return .retry(reason: what, after: nil)
        default: return .failed(reason: what)
        }
    }
}
