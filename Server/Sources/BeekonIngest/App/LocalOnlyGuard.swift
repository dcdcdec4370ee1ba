import Foundation
import Hummingbird

/// What keeps auth off (the zero-config default) safe from web pages (issue 28, finding 6):
/// while auth is off, a request must name an allowed host in `Host` (loopback names, the
/// bound host, the `--public-url` host, `--allowed-host` values; any port), which defeats
/// DNS rebinding (`421`), and a request that can change state (`POST`, `PUT`, `PATCH`,
/// `DELETE`) that carries an `Origin` must come from the server's own origin — the scheme it
/// is reached by, and the host and port of the request's `Host` — which defeats cross-site
/// writes (`403`; issue 50: comparing the host alone let a page on another local port, e.g.
/// `http://localhost:3000`, write). With auth on, credentials guard every route and this is idle.
/// The live stream's event-driven path asks it too (it bypasses the router).
struct LocalOnlyGuard: Sendable {
    /// Whether the checks run (auth is off).
    let active: Bool
    /// Allowed host names, lower-cased, without port or brackets.
    let hosts: Set<String>
    /// The schemes a page of this server's own is served by: `http`, and the `--public-url`'s
    /// (`https` behind a TLS proxy).
    let schemes: Set<String>

    /// The guard for a configuration.
    init(_ config: IngestConfiguration) {
        active = !config.authRequired
        var hosts: Set<String> = ["localhost", "127.0.0.1", "::1"]
        let bound = config.host.lowercased()
        if !bound.isEmpty, bound != "0.0.0.0", bound != "::" { hosts.insert(Self.name(bound)) }
        if let url = config.publicURL.flatMap(URL.init(string:)), let host = url.host { hosts.insert(Self.name(host.lowercased())) }
        for host in config.allowedHosts { hosts.insert(Self.name(host.lowercased())) }
        self.hosts = hosts
        var schemes: Set<String> = ["http"]
        if let scheme = config.publicURL.flatMap(URL.init(string:))?.scheme?.lowercased() { schemes.insert(scheme) }
        self.schemes = schemes
    }

    /// The refusal for `request`, or nil when it may proceed.
    func refusal(for request: Request) -> Response? {
        guard active else { return nil }
        let host = request.head.authority ?? ""
        guard allows(authority: host) else {
            return APIResponse.error(
                .misdirectedRequest, "misdirected_request",
                "with auth off this server answers only to its own host names (got Host '\(host.prefix(100))'); add --allowed-host")
        }
        let unsafe: Set<HTTPRequest.Method> = [.post, .put, .patch, .delete]
        if unsafe.contains(request.method), let origin = request.headers[.origin] {
            guard isOwnOrigin(origin, authority: host) else {
                return APIResponse.error(
                    .forbidden, "cross_origin", "with auth off this server refuses writes from another origin ('\(origin.prefix(100))')")
            }
        }
        return nil
    }

    /// Whether a `Host` value (`name[:port]`, `[v6][:port]`) names an allowed host.
    func allows(authority: String) -> Bool {
        hosts.contains(Self.split(authority).host)
    }

    /// Whether `origin` is the server's own as the request addressed it (`authority`, its
    /// `Host`): a scheme of ``schemes``, and the host and port of `authority`, a missing port
    /// being the scheme's default. `null`, another port or another scheme is another site.
    func isOwnOrigin(_ origin: String, authority: String) -> Bool {
        guard let url = URL(string: origin), let scheme = url.scheme?.lowercased(), schemes.contains(scheme),
            let host = url.host?.lowercased(), url.user == nil, url.query == nil, url.path.isEmpty || url.path == "/"
        else { return false }
        let defaultPort = scheme == "https" ? 443 : 80
        let own = Self.split(authority)
        return Self.name(host) == own.host && (url.port ?? defaultPort) == (own.port ?? defaultPort)
    }

    /// A `Host` value's host name (as compared) and port.
    private static func split(_ authority: String) -> (host: String, port: Int?) {
        var text = Substring(authority.lowercased())
        var port: Int?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return ("", nil) }
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
            text = text[text.index(after: text.startIndex)..<close]
        } else if let colon = text.lastIndex(of: ":") {
            port = Int(text[text.index(after: colon)...])
            text = text[..<colon]
        }
        return (name(String(text)), port)
    }

    /// A host name as compared: brackets and a trailing dot dropped.
    private static func name(_ host: String) -> String {
        var h = host
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h.hasSuffix(".") { h.removeLast() }
        return h
    }
}

/// ``LocalOnlyGuard`` in front of every route.
struct LocalOnlyMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The checks.
    let guarding: LocalOnlyGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = guarding.refusal(for: request) { return refusal }
        return try await next(request, context)
    }
}
