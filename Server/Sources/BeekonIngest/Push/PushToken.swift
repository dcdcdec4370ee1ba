import BeekonWire
import Foundation

/// A device's push token (SPEC XR-6): one per install, registered with the device's own
/// credential (`PUT /v1/devices/{install_id}/push-token`), replaced when it changes and
/// removed when the provider says it is no longer valid. No route ever returns it.
public struct PushToken: Sendable, Equatable {
    /// Which push service the token belongs to.
    public enum Provider: String, Sendable, CaseIterable {
        /// Apple Push Notification service (iOS, iPadOS, macOS, watchOS).
        case apns
        /// Firebase Cloud Messaging (Android clients of the same wire contract).
        case fcm
    }

    /// The APNs environment a device token was issued for (it only works there).
    public enum Environment: String, Sendable, CaseIterable {
        /// `api.sandbox.push.apple.com`: development builds.
        case sandbox
        /// `api.push.apple.com`: App Store, TestFlight and ad-hoc builds.
        case production
    }

    /// The install the token wakes.
    public var installId: UUID
    /// APNs or FCM.
    public var provider: Provider
    /// The APNs device token (lowercase hex) or the FCM registration token.
    public var token: String
    /// APNs only: the environment the token belongs to.
    public var environment: Environment?
    /// APNs only: the app's bundle id (`apns-topic`).
    public var topic: String?
    /// When it was registered (Unix ms).
    public var updatedAtMillis: Int64

    /// Creates a token.
    public init(
        installId: UUID, provider: Provider, token: String, environment: Environment? = nil, topic: String? = nil,
        updatedAtMillis: Int64
    ) {
        self.installId = installId
        self.provider = provider
        self.token = token
        self.environment = environment
        self.topic = topic
        self.updatedAtMillis = updatedAtMillis
    }

    /// Validates a registration body, exactly as the contract's `PushTokenRegistration` says:
    /// `{"provider":"apns","token":"<hex>","environment":"sandbox|production","topic":"<bundle id>"}`
    /// or `{"provider":"fcm","token":"<registration token>"}`, no other fields.
    static func parse(_ body: [UInt8], installId: UUID, nowMillis: Int64) -> Result<PushToken, PushTokenRefusal> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let provider = (object["provider"] as? String).flatMap(Provider.init(rawValue:)), let token = object["token"] as? String
        else {
            return .failure(PushTokenRefusal(#"send {"provider":"apns"|"fcm","token":"…"} (APNs also "environment" and "topic")"#))
        }
        let printable = { (c: Character) in c.asciiValue.map { (0x21...0x7E).contains($0) } ?? false }
        switch provider {
        case .apns:
            guard Set(object.keys) == ["provider", "token", "environment", "topic"] else {
                return .failure(PushTokenRefusal("an APNs token needs exactly provider, token, environment and topic"))
            }
            // Device tokens are hex (32 bytes today; Apple says not to assume a length).
            let hex = token.lowercased()
            guard (16...200).contains(hex.utf8.count), hex.utf8.count % 2 == 0,
                hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
            else {
                return .failure(PushTokenRefusal("an APNs token is the device token in hex (16-200 digits)"))
            }
            guard let env = (object["environment"] as? String).flatMap(Environment.init(rawValue:)) else {
                return .failure(PushTokenRefusal("environment must be sandbox or production"))
            }
            guard let topic = object["topic"] as? String, (1...255).contains(topic.utf8.count),
                topic.utf8.allSatisfy({
                    (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || [45, 46, 95].contains($0)
                })
            else {
                return .failure(PushTokenRefusal("topic must be the app's bundle id"))
            }
            return .success(
                PushToken(installId: installId, provider: .apns, token: hex, environment: env, topic: topic, updatedAtMillis: nowMillis))
        case .fcm:
            guard Set(object.keys) == ["provider", "token"], (1...4096).contains(token.utf8.count), token.allSatisfy(printable) else {
                return .failure(PushTokenRefusal("an FCM token is the registration token (printable ASCII), with no other fields"))
            }
            return .success(PushToken(installId: installId, provider: .fcm, token: token, updatedAtMillis: nowMillis))
        }
    }
}

/// Why a push-token registration was refused (the 400's message).
struct PushTokenRefusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Persistence of push tokens: one row per install.
public protocol PushTokenStore: Sendable {
    /// Stores `token` for its install, replacing any earlier one.
    func setPushToken(_ token: PushToken) async throws(StoreError)
    /// The install's token, if any.
    func pushToken(installId: UUID) async throws(StoreError) -> PushToken?
    /// Removes the install's token; when `ifToken` is given, only if it is still that token (a
    /// provider's "unregistered" must not remove a newer token registered meanwhile). Returns
    /// whether a row went.
    @discardableResult
    func removePushToken(installId: UUID, ifToken: String?) async throws(StoreError) -> Bool
}
