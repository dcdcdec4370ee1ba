import Beekon
import Foundation

/// The agent's `--config` file: a JSON object whose keys are the SDK's
/// configuration field names. Unknown keys and wrong types are errors that
/// name the key, so a typo never silently falls back to a default.
struct AgentConfig: Sendable, Equatable {
    var sdk = BeekonConfig()
    /// `extras`: attached to every upload (SY-9); nil when the key is absent.
    var extras: [String: String]?

    /// A problem with the config file, printed as one line.
    struct Problem: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    static let knownKeys = ["preset", "minTimeBetweenLocationsSeconds", "minDistanceBetweenLocationsMeters", "sync", "extras"]
    static let knownSyncKeys = ["url", "headers", "intervalSeconds", "batchSize", "syncThreshold", "keepUploadedLocations"]

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
            case "sync":
                config.sdk.sync = try parseSync(value)
            case "extras":
                config.extras = try stringMap("extras", value)
            default:
                throw Problem(description: "unknown key '\(key)' (known: \(knownKeys.joined(separator: ", ")))")
            }
        }
        do { try config.sdk.validate() } catch { throw Problem(description: error.description) }
        return config
    }

    private static func parseSync(_ value: JSONValue) throws(Problem) -> SyncConfig {
        guard case .object(let o) = value else {
            throw Problem(description: "key 'sync' must be an object, got \(value.typeName)")
        }
        guard case .string(let s)? = o["url"], let url = URL(string: s) else {
            throw Problem(description: "key 'sync.url' is required and must be a URL string")
        }
        var sync = SyncConfig(url: url)
        for key in o.keys.sorted() {
            let v = o[key]!
            switch key {
            case "url": break
            case "headers": sync.headers = try stringMap("sync.headers", v)
            case "intervalSeconds": sync.intervalSeconds = try number("sync.intervalSeconds", v)
            case "batchSize": sync.batchSize = try integer("sync.batchSize", v)
            case "syncThreshold": sync.syncThreshold = try integer("sync.syncThreshold", v)
            case "keepUploadedLocations":
                guard case .bool(let b) = v else {
                    throw Problem(description: "key 'sync.keepUploadedLocations' must be a boolean, got \(v.typeName)")
                }
                sync.keepUploadedLocations = b
            default:
                throw Problem(description: "unknown key 'sync.\(key)' (known: \(knownSyncKeys.joined(separator: ", ")))")
            }
        }
        return sync
    }

    private static func stringMap(_ key: String, _ value: JSONValue) throws(Problem) -> [String: String] {
        guard case .object(let o) = value else {
            throw Problem(description: "key '\(key)' must be an object of strings, got \(value.typeName)")
        }
        var out: [String: String] = [:]
        for (k, v) in o {
            guard case .string(let s) = v else {
                throw Problem(description: "key '\(key).\(k)' must be a string, got \(v.typeName)")
            }
            out[k] = s
        }
        return out
    }

    private static func integer(_ key: String, _ value: JSONValue) throws(Problem) -> Int {
        let n = try number(key, value)
        guard n == n.rounded(), n <= 1e9 else { throw Problem(description: "key '\(key)' must be a whole number") }
        return Int(n)
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
