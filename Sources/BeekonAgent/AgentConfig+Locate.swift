import Beekon

extension AgentConfig {
    static let knownLocateKeys = ["sharing", "minIntervalSeconds", "timeoutSeconds"]

    /// `locate`: the device-side guards for locate requests (BY-2).
    static func parseLocate(_ value: JSONValue) throws(Problem) -> LocatePolicy {
        guard case .object(let o) = value else {
            throw Problem(description: "key 'locate' must be an object, got \(value.typeName)")
        }
        var policy = LocatePolicy()
        for key in o.keys.sorted() {
            let v = o[key]!
            switch key {
            case "sharing":
                guard case .bool(let b) = v else { throw Problem(description: "key 'locate.sharing' must be a boolean, got \(v.typeName)") }
                policy.sharingEnabled = b
            case "minIntervalSeconds":
                let n = try number("locate.minIntervalSeconds", v)
                guard n >= 0 else { throw Problem(description: "key 'locate.minIntervalSeconds' must be at least 0") }
                policy.minIntervalSeconds = n
            case "timeoutSeconds":
                let n = try number("locate.timeoutSeconds", v)
                guard n > 0, n <= 600 else { throw Problem(description: "key 'locate.timeoutSeconds' must be in (0, 600]") }
                policy.timeoutSeconds = n
            default:
                throw Problem(description: "unknown key 'locate.\(key)' (known: \(knownLocateKeys.joined(separator: ", ")))")
            }
        }
        return policy
    }
}
