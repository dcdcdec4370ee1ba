import BeekonWire
import Foundation

/// A device's push token (SPEC XR-6): one per install, registered with the device's own
/// credential (`PUT /v1/devices/{install_id}/push-token`), replaced when it changes and
/// removed when the provider says it is no longer valid. No route ever returns it.
package struct PushToken: Sendable, Equatable {
    /// Which push service the token belongs to.
    package enum Provider: String, Sendable, CaseIterable {
        /// Apple Push Notification service (iOS, iPadOS, macOS, watchOS).
        case apns
        /// Firebase Cloud Messaging (Android clients of the same wire contract).
        case fcm
    }

    /// The APNs environment a device token was issued for (it only works there).
    package enum Environment: String, Sendable, CaseIterable {
        /// `api.sandbox.push.apple.com`: development builds.
        case sandbox
        /// `api.push.apple.com`: App Store, TestFlight and ad-hoc builds.
        case production
    }

    /// The install the token wakes.
    package var installId: UUID
    /// APNs or FCM.
    package var provider: Provider
    /// The APNs device token (lowercase hex) or the FCM registration token.
    package var token: String
    /// APNs only: the environment the token belongs to.
    package var environment: Environment?
    /// APNs only: the app's bundle id (`apns-topic`).
    package var topic: String?
    /// When it was registered (Unix ms).
    package var updatedAtMillis: Int64

    /// Creates a token.
    package init(
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

    /// Validates a registration body (`WirePushTokenRegistration`, exactly as the contract's
    /// `PushTokenRegistration` says) into the install's token. With `apnsTopics` (APNs is
    /// configured), an APNs token must name one of them (issue 50).
    static func parse(
        _ body: [UInt8], installId: UUID, nowMillis: Int64, apnsTopics: Set<String>? = nil
    ) -> Result<PushToken, PushTokenRefusal> {
        do {
            switch try WirePushTokenRegistration.decode(Data(body)) {
            case .apns(_, _, let topic) where apnsTopics.map({ !$0.contains(topic) }) ?? false:
                return .failure(
                    PushTokenRefusal("topic: '\(WireLimits.prefix(topic, bytes: 100))' is not an app this server sends pushes to"))
            case .apns(let token, let environment, let topic):
                return .success(
                    PushToken(
                        installId: installId, provider: .apns, token: token, environment: Environment(rawValue: environment.rawValue),
                        topic: topic, updatedAtMillis: nowMillis))
            case .fcm(let token):
                return .success(PushToken(installId: installId, provider: .fcm, token: token, updatedAtMillis: nowMillis))
            }
        } catch {
            switch error {
            case .invalid(_, let reason): return .failure(PushTokenRefusal(reason))
            case .malformed, .unsupportedSchemaVersion:
                return .failure(PushTokenRefusal(#"send {"provider":"apns"|"fcm","token":"…"} (APNs also "environment" and "topic")"#))
            }
        }
    }
}

/// Why a push-token registration was refused (the 400's message).
struct PushTokenRefusal: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Persistence of push tokens: one row per install.
package protocol PushTokenStore: Sendable {
    /// Stores `token` for its install, replacing any earlier one. A token belongs to one install:
    /// another install that held the same token loses it. Providers issue a token per
    /// app on one phone, so two installs holding it are one phone, whose older install id was
    /// left behind (an install id reset, a reinstall); its silence must not send that phone a
    /// nudge while the newer install reports.
    func setPushToken(_ token: PushToken) async throws(StoreError)
    /// The install's token, if any.
    func pushToken(installId: UUID) async throws(StoreError) -> PushToken?
    /// Removes the install's token; when `ifToken` is given, only if it is still that token (a
    /// provider's "unregistered" must not remove a newer token registered meanwhile). Returns
    /// whether a row went.
    @discardableResult
    func removePushToken(installId: UUID, ifToken: String?) async throws(StoreError) -> Bool
}
