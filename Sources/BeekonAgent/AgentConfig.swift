import Beekon
import Foundation

/// The agent's `--config` file: a JSON object whose keys are the SDK's
/// configuration field names. Unknown keys and wrong types are errors that
/// name the key, so a typo never silently falls back to a default.
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

    // The keys are the SDK's own (its Codable keys), plus the agent's `extras`, `geofences`, `appState` and `locate`.
    static let knownKeys = BeekonConfig.keyNames + ["extras", "geofences", "appState", "locate"]
    static let knownGeofenceKeys = Geofence.keyNames
    static let knownSyncKeys = SyncConfig.keyNames
    static let knownAuthKeys = AuthConfig.keyNames
    static let knownMappingKeys = ["accessToken", "refreshToken", "expiresAt", "expiresIn"]

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
            case "locate":
                config.locate = try parseLocate(value)
            case "extras":
                config.extras = try stringMap("extras", value)
            case "geofences":
                config.geofences = try parseGeofences(value)
            case "whenStationary":
                guard case .string(let s) = value, let policy = StationaryPolicy(rawValue: s) else {
                    throw Problem(description: "key 'whenStationary' must be one of keepTracking, pause, pauseWithCheckIns")
                }
                config.sdk.whenStationary = policy
            case "stationaryRadiusMeters":
                config.sdk.stationaryRadiusMeters = try number(key, value)
            case "checkInIntervalSeconds":
                config.sdk.checkInIntervalSeconds = try number(key, value)
            case "turnThresholdDegrees":
                config.sdk.turnThresholdDegrees = try number(key, value)
            case "turnMinTimeSeconds":
                config.sdk.turnMinTimeSeconds = try number(key, value)
            case "maxDeviationMeters":
                config.sdk.maxDeviationMeters = try number(key, value)
            case "maxIntervalBetweenLocationsSeconds":
                config.sdk.maxIntervalBetweenLocationsSeconds = try number(key, value)
            default:
                guard try config.applyPipelineKey(key, value) else {
                    throw Problem(description: "unknown key '\(key)' (known: \(knownKeys.joined(separator: ", ")))")
                }
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
            case "requestTimeoutSeconds":
                sync.requestTimeoutSeconds = try number("sync.requestTimeoutSeconds", v)
            case "keepUploadedLocations":
                guard case .bool(let b) = v else {
                    throw Problem(description: "key 'sync.keepUploadedLocations' must be a boolean, got \(v.typeName)")
                }
                sync.keepUploadedLocations = b
            case "auth": sync.auth = try parseAuth(v)
            case "privacy": sync.privacy = try parsePrivacy(v)
            case "trustedCertificates":
                guard case .array(let items) = v, !items.isEmpty else {
                    throw Problem(description: "key 'sync.trustedCertificates' must be a non-empty array of PEM file paths")
                }
                sync.trustedCertificates = try items.map { item throws(Problem) -> String in
                    guard case .string(let path) = item, !path.isEmpty else {
                        throw Problem(description: "key 'sync.trustedCertificates' must list file paths (strings), got \(item.typeName)")
                    }
                    return path
                }
            default:
                throw Problem(description: "unknown key 'sync.\(key)' (known: \(knownSyncKeys.joined(separator: ", ")))")
            }
        }
        return sync
    }

    private static func parseGeofences(_ value: JSONValue) throws(Problem) -> [Geofence] {
        guard case .array(let items) = value else {
            throw Problem(description: "key 'geofences' must be an array, got \(value.typeName)")
        }
        var fences: [Geofence] = []
        for (i, item) in items.enumerated() {
            let path = "geofences[\(i)]"
            let (o, c) = try circle(item, path: path, known: knownGeofenceKeys)
            func flag(_ k: String) throws(Problem) -> Bool {
                guard let v = o[k] else { return true }
                guard case .bool(let b) = v else { throw Problem(description: "key '\(path).\(k)' must be a boolean") }
                return b
            }
            let fence = Geofence(
                id: c.id, latitude: c.latitude, longitude: c.longitude, radiusMeters: c.radiusMeters,
                notifyOnEntry: try flag("notifyOnEntry"), notifyOnExit: try flag("notifyOnExit"))
            do { try fence.validate() } catch { throw Problem(description: "\(path): \(error.description)") }
            fences.append(fence)
        }
        return fences
    }

    /// `sync.auth`: the `AuthConfig` field names (AU-2). Error messages name keys, never token values.
    private static func parseAuth(_ value: JSONValue) throws(Problem) -> AuthConfig {
        guard case .object(let o) = value else {
            throw Problem(description: "key 'sync.auth' must be an object, got \(value.typeName)")
        }
        var auth = AuthConfig()
        for key in o.keys.sorted() {
            let v = o[key]!
            let path = "sync.auth.\(key)"
            switch key {
            case "accessToken": auth.accessToken = try string(path, v)
            case "refreshToken": auth.refreshToken = try string(path, v)
            case "expiresAt": auth.expiresAt = try number(path, v)
            case "strategy":
                guard case .string(let s) = v, let strategy = AuthConfig.Strategy(rawValue: s) else {
                    throw Problem(description: "key '\(path)' must be one of bearer, raw")
                }
                auth.strategy = strategy
            case "refreshUrl":
                guard case .string(let s) = v, let url = URL(string: s) else {
                    throw Problem(description: "key '\(path)' must be a URL string")
                }
                auth.refreshUrl = url
            case "refreshPayload": auth.refreshPayload = try stringMap(path, v)
            case "refreshHeaders": auth.refreshHeaders = try stringMap(path, v)
            case "refreshBodyFormat":
                guard case .string(let s) = v, let format = AuthConfig.BodyFormat(rawValue: s) else {
                    throw Problem(description: "key '\(path)' must be one of form, json")
                }
                auth.refreshBodyFormat = format
            case "responseMapping":
                guard case .object(let m) = v else {
                    throw Problem(description: "key '\(path)' must be an object, got \(v.typeName)")
                }
                var mapping = AuthConfig.ResponseMapping()
                for mk in m.keys.sorted() {
                    let mv = m[mk]!
                    let mpath = "\(path).\(mk)"
                    switch mk {
                    case "accessToken": mapping.accessToken = try string(mpath, mv)
                    case "refreshToken": mapping.refreshToken = try string(mpath, mv)
                    case "expiresAt": mapping.expiresAt = try string(mpath, mv)
                    case "expiresIn": mapping.expiresIn = try string(mpath, mv)
                    default:
                        throw Problem(description: "unknown key '\(mpath)' (known: \(knownMappingKeys.joined(separator: ", ")))")
                    }
                }
                auth.responseMapping = mapping
            case "skewMarginSeconds": auth.skewMarginSeconds = try number(path, v)
            default:
                throw Problem(description: "unknown key '\(path)' (known: \(knownAuthKeys.joined(separator: ", ")))")
            }
        }
        return auth
    }

    private static func string(_ key: String, _ value: JSONValue) throws(Problem) -> String {
        guard case .string(let s) = value else {
            throw Problem(description: "key '\(key)' must be a string, got \(value.typeName)")
        }
        return s
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

    static func number(_ key: String, _ value: JSONValue) throws(Problem) -> Double {
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
