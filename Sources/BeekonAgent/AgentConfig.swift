import Beekon
import Foundation

/// The agent's `--config` file: a JSON object whose keys are the SDK's configuration field
/// names, decoded by `BeekonConfig`'s own `Codable` (strictly: `ConfigDecoding`), plus the
/// agent's `extras`, `geofences`, `appState` and `locate`. Unknown keys, `null`s and wrong
/// types are errors that name the key, so a typo never silently falls back to a default.
struct AgentConfig: Sendable, Equatable {
    var sdk = BeekonConfig()
    /// `extras`: attached to every upload (SY-9); nil when the key is absent.
    var extras: [String: String]?
    /// `geofences`: the complete set to watch; nil when the key is absent (stored fences are kept).
    var geofences: [Geofence]?
    /// `appState`: the profile to start in (BY-4); SIGUSR1/SIGUSR2 switch at run time.
    var appState: AppState?
    /// `locate`: the device-side guards for locate requests (BY-2); nil: the SDK defaults.
    var locate: LocatePolicy?

    /// A problem with the config file, printed as one line: control characters and line
    /// breaks echoed from the file (a key, a geofence id) are escaped.
    struct Problem: Error, CustomStringConvertible, Equatable {
        var description: String

        init(description: String) {
            self.description = description.unicodeScalars.map { c in
                c.properties.generalCategory == .control || Character(c).isNewline ? c.escaped(asASCII: true) : String(c)
            }.joined()
        }
    }

    /// The agent's own top-level keys, next to the SDK's.
    enum AgentKeys: String, CodingKey, CaseIterable {
        case extras, geofences, appState, locate
    }

    /// The fix pipeline's top-level keys (BY-4, BY-6), which the README's configuration table lists.
    static let pipelineKeys = [
        "classifyActivity", "heartbeatSeconds", "foregroundProfile", "backgroundProfile", "diagnosticLogLevel",
        "diagnosticLogCapacity", "appState", "followsAppLifecycle",
    ]

    static func load(path: String) throws(Problem) -> AgentConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "\(path): cannot read the file")
        }
        var config: AgentConfig
        do { config = try parse(data) } catch {
            throw Problem(description: "\(path): \(error.description)")
        }
        // Certificate paths are relative to the config file's folder.
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        let certificates = config.sdk.sync?.trustedCertificates?.map {
            $0.hasPrefix("/") ? $0 : folder.appendingPathComponent($0).standardizedFileURL.path
        }
        config.sdk.sync?.trustedCertificates = certificates
        return config
    }

    /// Decodes and validates a config file's bytes.
    static func parse(_ data: Data) throws(Problem) -> AgentConfig {
        let config: AgentConfig
        do {
            config = try ConfigDecoding.decoder(topLevelKeys: AgentKeys.allCases.map(\.rawValue)).decode(AgentConfig.self, from: data)
        } catch {
            throw Problem(description: ConfigDecoding.describe(error))
        }
        for (i, fence) in (config.geofences ?? []).enumerated() {
            do { try fence.validate() } catch { throw Problem(description: "geofences[\(i)]: \(error.description)") }
        }
        do { try config.sdk.validate() } catch { throw Problem(description: error.description) }
        return config
    }
}

extension AgentConfig: Decodable {
    /// The SDK's configuration from the whole object, then the agent's own keys.
    init(from decoder: any Decoder) throws {
        sdk = try BeekonConfig(from: decoder)
        let c = try decoder.container(keyedBy: AgentKeys.self)
        extras = try c.decodeIfPresent([String: String].self, forKey: .extras)
        geofences = try c.decodeIfPresent([Geofence].self, forKey: .geofences)
        appState = try c.decodeIfPresent(AppState.self, forKey: .appState)
        locate = try c.decodeIfPresent(LocatePolicy.self, forKey: .locate)
    }
}
