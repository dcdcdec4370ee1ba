import Foundation

/// The URL rule (SY-2) for every endpoint the SDK calls (`sync.url`, `sync.auth.refreshUrl`):
/// absolute, `https`, or plain `http` to a loopback host only. Errors name the field and
/// never show a query string or credentials.
enum EndpointRule {
    /// Throws `invalidConfiguration` naming `field` when `url` breaks the rule.
    static func check(_ url: URL, field: String) throws(BeekonError) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            throw .invalidConfiguration("\(field) must be an absolute http(s) URL (got \(redacted(url)))")
        }
        switch scheme {
        case "https": break
        case "http":
            guard isLoopback(host) else {
                throw .invalidConfiguration("\(field) must use https; plain http is allowed only to loopback hosts (got host \(host))")
            }
        default:
            throw .invalidConfiguration("\(field) must use https (got scheme \(scheme))")
        }
    }

    /// `localhost`, `127.0.0.0/8` and `::1`.
    static func isLoopback(_ rawHost: String) -> Bool {
        let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { p in UInt8(p) != nil }
    }

    /// The URL without its query string and credentials, for logs and errors.
    static func redacted(_ url: URL) -> String {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        if c.query != nil { c.query = "…" }
        c.user = nil
        c.password = nil
        return c.string ?? "<url>"
    }
}
