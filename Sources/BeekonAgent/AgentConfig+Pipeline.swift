import Beekon
import Foundation

/// Config keys of the fix pipeline (issue 16): `sync.privacy`, with the SDK's field names.
extension AgentConfig {
    static let knownPrivacyKeys = ["blurRadiusMeters", "zones"]
    static let knownZoneKeys = ["id", "latitude", "longitude", "radiusMeters", "action"]

    /// `sync.privacy`: `{"blurRadiusMeters": 200, "zones": [{"id","latitude","longitude","radiusMeters","action"}]}`.
    static func parsePrivacy(_ value: JSONValue) throws(Problem) -> PrivacyConfig {
        guard case .object(let o) = value else {
            throw Problem(description: "key 'sync.privacy' must be an object, got \(value.typeName)")
        }
        var privacy = PrivacyConfig()
        for key in o.keys.sorted() {
            let v = o[key]!
            switch key {
            case "blurRadiusMeters": privacy.blurRadiusMeters = try pipelineNumber("sync.privacy.blurRadiusMeters", v)
            case "zones":
                guard case .array(let items) = v else {
                    throw Problem(description: "key 'sync.privacy.zones' must be an array, got \(v.typeName)")
                }
                privacy.zones = try items.enumerated().map { (i, item) throws(Problem) in
                    try parseZone(item, path: "sync.privacy.zones[\(i)]")
                }
            default:
                throw Problem(description: "unknown key 'sync.privacy.\(key)' (known: \(knownPrivacyKeys.joined(separator: ", ")))")
            }
        }
        return privacy
    }

    /// A circle object (a geofence, a privacy zone): only `known` keys; `id`, `latitude`,
    /// `longitude` and `radiusMeters` required. Returns the object for its other keys.
    static func circle(
        _ value: JSONValue, path: String, known: [String]
    ) throws(Problem) -> ([String: JSONValue], (id: String, latitude: Double, longitude: Double, radiusMeters: Double)) {
        guard case .object(let o) = value else { throw Problem(description: "key '\(path)' must be an object") }
        for key in o.keys.sorted() where !known.contains(key) {
            throw Problem(description: "unknown key '\(path).\(key)' (known: \(known.joined(separator: ", ")))")
        }
        guard case .string(let id)? = o["id"] else { throw Problem(description: "key '\(path).id' is required and must be a string") }
        func required(_ k: String) throws(Problem) -> Double {
            guard let v = o[k] else { throw Problem(description: "key '\(path).\(k)' is required") }
            guard case .number(let n) = v, n.isFinite else {
                throw Problem(description: "key '\(path).\(k)' must be a number, got \(v.typeName)")
            }
            return n
        }
        return (o, (id, try required("latitude"), try required("longitude"), try required("radiusMeters")))
    }

    private static func parseZone(_ value: JSONValue, path: String) throws(Problem) -> PrivacyZone {
        let (o, c) = try circle(value, path: path, known: knownZoneKeys)
        var action = PrivacyZone.Action.replaceWithCentre
        if let a = o["action"] {
            guard case .string(let s) = a, let parsed = PrivacyZone.Action(rawValue: s) else {
                throw Problem(description: "key '\(path).action' must be one of replaceWithCentre, withhold")
            }
            action = parsed
        }
        return PrivacyZone(id: c.id, latitude: c.latitude, longitude: c.longitude, radiusMeters: c.radiusMeters, action: action)
    }

    static func pipelineBool(_ key: String, _ value: JSONValue) throws(Problem) -> Bool {
        guard case .bool(let b) = value else {
            throw Problem(description: "key '\(key)' must be a boolean, got \(value.typeName)")
        }
        return b
    }

    static func pipelineNumber(_ key: String, _ value: JSONValue) throws(Problem) -> Double {
        guard case .number(let n) = value, n.isFinite, n >= 0 else {
            throw Problem(description: "key '\(key)' must be a number ≥ 0, got \(value.typeName)")
        }
        return n
    }
}

/// Top-level keys of the fix pipeline (BY-4, BY-6), with the SDK's names.
extension AgentConfig {
    static let pipelineKeys = [
        "classifyActivity", "heartbeatSeconds", "foregroundProfile", "backgroundProfile", "diagnosticLogLevel",
        "diagnosticLogCapacity", "appState", "followsAppLifecycle",
    ]
    static let knownProfileKeys = [
        "preset", "minTimeBetweenLocationsSeconds", "minDistanceBetweenLocationsMeters", "whenStationary",
        "stationaryRadiusMeters", "checkInIntervalSeconds", "heartbeatSeconds",
    ]

    /// Applies one pipeline key; returns false when `key` is not one of them.
    mutating func applyPipelineKey(_ key: String, _ value: JSONValue) throws(Problem) -> Bool {
        switch key {
        case "classifyActivity": sdk.classifyActivity = try Self.pipelineBool(key, value)
        case "followsAppLifecycle": sdk.followsAppLifecycle = try Self.pipelineBool(key, value)
        case "heartbeatSeconds": sdk.heartbeatSeconds = try Self.pipelineNumber(key, value)
        case "foregroundProfile": sdk.foregroundProfile = try Self.parseProfile(value, path: key)
        case "backgroundProfile": sdk.backgroundProfile = try Self.parseProfile(value, path: key)
        case "diagnosticLogLevel":
            guard case .string(let s) = value, let level = DiagnosticLevel(rawValue: s) else {
                throw Problem(description: "key 'diagnosticLogLevel' must be one of debug, info, warning, error")
            }
            sdk.diagnosticLogLevel = level
        case "diagnosticLogCapacity":
            let n = try Self.pipelineNumber(key, value)
            guard n == n.rounded(), n <= 1e9 else { throw Problem(description: "key 'diagnosticLogCapacity' must be a whole number") }
            sdk.diagnosticLogCapacity = Int(n)
        case "appState":
            guard case .string(let s) = value, let state = AppState(rawValue: s) else {
                throw Problem(description: "key 'appState' must be one of foreground, background")
            }
            appState = state
        default:
            return false
        }
        return true
    }

    private static func parseProfile(_ value: JSONValue, path: String) throws(Problem) -> LocationProfile {
        guard case .object(let o) = value else { throw Problem(description: "key '\(path)' must be an object, got \(value.typeName)") }
        var p = LocationProfile()
        for key in o.keys.sorted() {
            let v = o[key]!
            let k = "\(path).\(key)"
            switch key {
            case "preset":
                guard case .string(let s) = v, let preset = Preset(rawValue: s) else {
                    throw Problem(description: "key '\(k)' must be one of saver, balanced, precision")
                }
                p.preset = preset
            case "minTimeBetweenLocationsSeconds": p.minTimeBetweenLocationsSeconds = try pipelineNumber(k, v)
            case "minDistanceBetweenLocationsMeters": p.minDistanceBetweenLocationsMeters = try pipelineNumber(k, v)
            case "whenStationary":
                guard case .string(let s) = v, let policy = StationaryPolicy(rawValue: s) else {
                    throw Problem(description: "key '\(k)' must be one of keepTracking, pause, pauseWithCheckIns")
                }
                p.whenStationary = policy
            case "stationaryRadiusMeters": p.stationaryRadiusMeters = try pipelineNumber(k, v)
            case "checkInIntervalSeconds": p.checkInIntervalSeconds = try pipelineNumber(k, v)
            case "heartbeatSeconds": p.heartbeatSeconds = try pipelineNumber(k, v)
            default:
                throw Problem(description: "unknown key '\(k)' (known: \(knownProfileKeys.joined(separator: ", ")))")
            }
        }
        return p
    }
}
