import Foundation

/// Strict decoding of a configuration file (the agent's `--config`): with
/// `ConfigDecoding.strict` in the decoder's `userInfo`, every configuration type's
/// `init(from:)` refuses a key it does not know and a `null` value, so a typo never silently
/// falls back to a default. Without it (a persisted configuration) unknown keys are ignored,
/// as before. `describe(_:)` turns a `DecodingError` into one line naming the key's path.
package enum ConfigDecoding {
    /// The `userInfo` key whose value, a `Strictness`, turns strict decoding on.
    package static let strict = CodingUserInfoKey(rawValue: "beekon.config.strict")!

    /// Strict decoding's settings: the extra keys the top-level object may carry (a host's
    /// own keys next to the SDK's, like the agent's `extras`).
    package struct Strictness: Sendable {
        /// Keys accepted at the top level in addition to `BeekonConfig`'s.
        package var topLevelKeys: [String]

        /// Creates the settings.
        package init(topLevelKeys: [String] = []) { self.topLevelKeys = topLevelKeys }
    }

    /// A decoder for a configuration file: strict, with `topLevelKeys` allowed at the top.
    package static func decoder(topLevelKeys: [String] = []) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[strict] = Strictness(topLevelKeys: topLevelKeys)
        return decoder
    }

    /// One line for a decoding failure, naming the key by its path (`sync.auth.strategy`,
    /// `geofences[2].latitude`). It never echoes a string value from the file.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .keyNotFound(let key, let context):
            return "key '\(path(context.codingPath + [key]))' is required"
        case .valueNotFound(_, let context):
            return "key '\(path(context.codingPath))' must not be null"
        case .typeMismatch(let type, let context):
            if context.codingPath.isEmpty { return "the top level must be \(kind(type))" }
            return "key '\(path(context.codingPath))' must be \(kind(type))"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let reason = (context.underlyingError as? NSError)?.localizedDescription ?? context.debugDescription
                return "not valid JSON (\(reason))"
            }
            return "key '\(path(context.codingPath))' \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    /// `sync.auth.strategy`, `geofences[2].latitude`.
    package static func path(_ codingPath: [any CodingKey]) -> String {
        var out = ""
        for key in codingPath {
            if let index = key.intValue {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return out
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Bool.Type: "a boolean"
        case is String.Type, is URL.Type: "a string"
        case is any BinaryInteger.Type: "a whole number"
        case is any BinaryFloatingPoint.Type: "a number"
        case is [Any].Type: "an array"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }

    /// A key of any name, to list what an object holds.
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension Decoder {
    /// Whether this is a config file's strict decoding.
    var isStrictConfig: Bool { userInfo[ConfigDecoding.strict] is ConfigDecoding.Strictness }

    /// Under strict decoding, throws for a key that is not one of `Keys` (nor, at the top
    /// level, one of the host's own) and for a `null` value; otherwise does nothing.
    func checkConfigKeys<Keys: CodingKey & CaseIterable>(_: Keys.Type, topLevel: Bool = false) throws {
        guard let strictness = userInfo[ConfigDecoding.strict] as? ConfigDecoding.Strictness else { return }
        let object = try container(keyedBy: ConfigDecoding.AnyKey.self)
        let extra = topLevel && codingPath.isEmpty ? strictness.topLevelKeys : []
        let known = Keys.allCases.map(\.stringValue) + extra
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            guard known.contains(key.stringValue) else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: codingPath + [key],
                        debugDescription: "is unknown (known: \(known.joined(separator: ", ")))"))
            }
            if try object.decodeNil(forKey: key) {
                throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath + [key], debugDescription: "null"))
            }
        }
    }

    /// Decodes a string enum, refusing anything else with the list of its values.
    func decodeConfigCase<T: RawRepresentable & CaseIterable>(_: T.Type) throws -> T where T.RawValue == String {
        let c = try singleValueContainer()
        guard let raw = try? c.decode(String.self), let value = T(rawValue: raw) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))"))
        }
        return value
    }
}

/// A value of the configuration that must satisfy a rule once decoded.
extension DecodingError {
    /// A value at `codingPath` + `key` that breaks a rule, e.g. `must be in (0, 600]`.
    static func configValue(_ codingPath: [any CodingKey], _ key: any CodingKey, _ rule: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: rule))
    }
}

// The configuration's string enums: anything but one of their values is an error that lists them.

extension Preset {
    /// Decodes one of the preset names; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension StationaryPolicy {
    /// Decodes one of the policy names; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension DiagnosticLevel {
    /// Decodes one of the level names; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension AppState {
    /// Decodes `foreground` or `background`; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension AuthConfig.Strategy {
    /// Decodes `bearer` or `raw`; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension AuthConfig.BodyFormat {
    /// Decodes `form` or `json`; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}

extension PrivacyZone.Action {
    /// Decodes `replaceWithCentre` or `withhold`; anything else is an error listing them.
    public init(from decoder: any Decoder) throws { self = try decoder.decodeConfigCase(Self.self) }
}
