import Foundation

/// A device's push token as it registers it (`PUT /v1/devices/{install_id}/push-token`, SPEC XR-6):
///
/// - APNs: `{"provider":"apns","token":"<hex>","environment":"sandbox|production","topic":"<bundle id>"}`
/// - FCM: `{"provider":"fcm","token":"<registration token>"}`
///
/// in that key order, with no other members (the contract's `additionalProperties: false`).
public enum WirePushTokenRegistration: Hashable, Sendable {
    /// The APNs environment a device token was issued for (the app's `aps-environment`).
    public enum Environment: String, Hashable, Sendable, CaseIterable {
        /// `api.sandbox.push.apple.com`: development builds.
        case sandbox
        /// `api.push.apple.com`: App Store, TestFlight and ad-hoc builds.
        case production
    }

    /// An APNs device token in lowercase hex, its environment, and the app's bundle id (`apns-topic`).
    case apns(token: String, environment: Environment, topic: String)
    /// An FCM registration token.
    case fcm(token: String)

    /// An APNs registration from the raw device token APNs gave the app.
    public static func apns(deviceToken: Data, environment: Environment, topic: String) -> WirePushTokenRegistration {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(deviceToken.count * 2)
        for byte in deviceToken {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0xF)])
        }
        return .apns(token: String(decoding: text, as: UTF8.self), environment: environment, topic: topic)
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 200)
        switch self {
        case .apns(let token, let environment, let topic):
            w.raw("{\"provider\":\"apns\",\"token\":")
            w.string(token)
            w.raw(",\"environment\":")
            w.string(environment.rawValue)
            w.raw(",\"topic\":")
            w.string(topic)
        case .fcm(let token):
            w.raw("{\"provider\":\"fcm\",\"token\":")
            w.string(token)
        }
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads and validates a registration: an APNs token is hex (16–200 digits, read as lowercase),
    /// its topic a bundle id; an FCM token is printable ASCII (1–4096); no other members.
    /// - Throws: `WireDecodingError` naming what is wrong.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WirePushTokenRegistration {
        let raw = try WireMessageReader.read(Raw.self, data)
        guard let provider = raw.provider, let token = raw.token else {
            throw .invalid(path: "$", reason: #"send {"provider":"apns"|"fcm","token":"…"} (APNs also "environment" and "topic")"#)
        }
        switch provider {
        case "apns":
            guard raw.keys == ["provider", "token", "environment", "topic"] else {
                throw .invalid(path: "$", reason: "an APNs token needs exactly provider, token, environment and topic")
            }
            // Device tokens are hex (32 bytes today; Apple says not to assume a length).
            let hex = token.lowercased()
            guard (16...200).contains(hex.utf8.count), hex.utf8.count % 2 == 0,
                hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
            else { throw .invalid(path: "token", reason: "an APNs token is the device token in hex (16-200 digits)") }
            guard let environment = raw.environment.flatMap(Environment.init(rawValue:)) else {
                throw .invalid(path: "environment", reason: "must be sandbox or production")
            }
            guard let topic = raw.topic, (1...255).contains(topic.utf8.count),
                topic.utf8.allSatisfy({
                    (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || [45, 46, 95].contains($0)
                })
            else { throw .invalid(path: "topic", reason: "must be the app's bundle id") }
            return .apns(token: hex, environment: environment, topic: topic)
        case "fcm":
            guard raw.keys == ["provider", "token"], (1...4096).contains(token.utf8.count),
                token.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                throw .invalid(path: "token", reason: "an FCM token is the registration token (printable ASCII), with no other fields")
            }
            return .fcm(token: token)
        default:
            throw .invalid(path: "provider", reason: "must be apns or fcm")
        }
    }

    /// The members as sent; values that are not strings read as nil, and `keys` lists every member.
    private struct Raw: Decodable {
        var keys: Set<String>
        var provider: String?, token: String?, environment: String?, topic: String?

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            keys = Set(c.allKeys.map(\.stringValue))
            func text(_ name: String) -> String? { try? c.decodeIfPresent(String.self, forKey: Key(stringValue: name)) }
            provider = text("provider")
            token = text("token")
            environment = text("environment")
            topic = text("topic")
        }
    }
}
