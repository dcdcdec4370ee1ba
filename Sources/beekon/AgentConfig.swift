import Beekon
import Foundation

/// The agent's `--config` file: a JSON object whose keys are the SDK's
/// configuration field names. Unknown keys and wrong types are errors that
/// name the key, so a typo never silently falls back to a default.
struct AgentConfig: Sendable, Equatable {
    var sdk = BeekonConfig()

    /// A problem with the config file, printed as one line.
    struct Problem: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    static let knownKeys = ["preset", "minTimeBetweenLocationsSeconds", "minDistanceBetweenLocationsMeters"]

    static func load(path: String) throws(Problem) -> AgentConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "\(path): cannot read the file")
        }
        do { return try parse(data) } catch {
            throw Problem(description: "\(path): \(error.description)")
        }
    }

    static func parse(_ data: Data) throws(Problem) -> AgentConfig {
        let root: JSONValue
        do { root = try JSONDecoder().decode(JSONValue.self, from: data) } catch {
            throw Problem(description: "not valid JSON (\(Self.short(error)))")
        }
        guard case .object(let object) = root else {
            throw Problem(description: "the top level must be a JSON object, got \(root.typeName)")
        }
        var config = AgentConfig()
        for key in object.keys.sorted() {
            let value = object[key]!
            switch key {
            case "preset":
                guard case .string(let s) = value, let preset = Preset(rawValue: s) else {
                    throw Problem(description: "key 'preset' must be one of saver, balanced, precision")
                }
                config.sdk.preset = preset
            case "minTimeBetweenLocationsSeconds":
                config.sdk.minTimeBetweenLocationsSeconds = try number(key, value)
            case "minDistanceBetweenLocationsMeters":
                config.sdk.minDistanceBetweenLocationsMeters = try number(key, value)
            default:
                throw Problem(description: "unknown key '\(key)' (known: \(knownKeys.joined(separator: ", ")))")
            }
        }
        do { try config.sdk.validate() } catch { throw Problem(description: error.description) }
        return config
    }

    private static func number(_ key: String, _ value: JSONValue) throws(Problem) -> Double {
        guard case .number(let n) = value, n.isFinite, n >= 0 else {
            throw Problem(description: "key '\(key)' must be a number ≥ 0, got \(value.typeName)")
        }
        return n
    }

    private static func short(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let c) = error {
            return c.underlyingError.map { "\($0.localizedDescription)" } ?? c.debugDescription
        }
        return error.localizedDescription
    }
}
