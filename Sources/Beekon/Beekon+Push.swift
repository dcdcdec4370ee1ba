import BeekonWire
import Foundation

/// The APNs environment a device token was issued for (the app's `aps-environment`
/// entitlement: `development` builds get sandbox tokens).
public enum PushEnvironment: String, Sendable, Equatable {
    /// Development builds (`api.sandbox.push.apple.com`).
    case sandbox
    /// App Store, TestFlight and ad-hoc builds (`api.push.apple.com`).
    case production
}

extension Beekon {
    /// Registers this device's APNs device token with the server, so that locate requests
    /// wake the app with a silent push (SPEC XR-6) instead of waiting for its next upload.
    ///
    /// Call it from `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` on
    /// every launch (the token can change); forward the pushes to the SDK's remote-notification
    /// handler. The token is sent with the device's own credential
    /// (`PUT /v1/devices/{install_id}/push-token`); when that fails (offline, sync not yet
    /// configured) it is sent again after the next ``sync()``, and a changed token replaces the old one.
    ///
    /// - Parameters:
    ///   - deviceToken: The token APNs gave the app.
    ///   - environment: `sandbox` for development-signed builds, else `production`.
    ///   - topic: The app's bundle id (`apns-topic`); default `Bundle.main.bundleIdentifier`.
    /// - Returns: Whether the server has the token now.
    @discardableResult
    public func setPushToken(_ deviceToken: Data, environment: PushEnvironment, topic: String? = nil) async -> Bool {
        guard let topic = topic ?? Bundle.main.bundleIdentifier else {
            logger.warning("push token not registered: no topic (pass the app's bundle id)")
            return false
        }
        let environment = WirePushTokenRegistration.Environment(rawValue: environment.rawValue) ?? .production
        return await registerPushToken(
            WirePushTokenRegistration.apns(deviceToken: deviceToken, environment: environment, topic: topic).encoded())
    }

    /// Registers this device's FCM registration token (Android clients of the same wire
    /// contract; see ``setPushToken(_:environment:topic:)`` for when it is sent again).
    @discardableResult
    public func setFCMToken(_ token: String) async -> Bool {
        await registerPushToken(WirePushTokenRegistration.fcm(token: token).encoded())
    }

    /// Sends `body` unless the server already has it; remembers it for a retry otherwise.
    private func registerPushToken(_ body: Data) async -> Bool {
        if pushRegistration?.body == body, pushRegistration?.registered == true { return true }
        pushRegistration = PushRegistration(body: body, registered: false)
        return await retryPushRegistration()
    }

    /// Sends a registration that has not reached the server yet (called after each sync).
    @discardableResult
    func retryPushRegistration() async -> Bool {
        guard let pending = pushRegistration, !pending.registered else { return pushRegistration != nil }
        guard let engine = try? await applySync(), let install = try? await ready().installID(makeID: deps.makeID) else {
            return false
        }
        let response = await engine.deviceRequest(
            path: "/v1/devices/\(install.wireString)/push-token", method: "PUT", body: pending.body, timeout: .seconds(30))
        guard response?.status == 204 || response?.status == 200 else {
            logger.warning("push token not registered yet; retried after the next sync", metadata: ["status": "\(response?.status ?? 0)"])
            return false
        }
        if pushRegistration?.body == pending.body { pushRegistration?.registered = true }
        return true
    }
}

/// A push-token registration and whether the server has it.
struct PushRegistration: Sendable, Equatable {
    var body: Data
    var registered: Bool
}
