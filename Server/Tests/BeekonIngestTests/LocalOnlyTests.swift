@testable import BeekonIngest
import BeekonWire
import Foundation
import Testing

/// Issue 28, finding 6, written as the attacks: with auth off (the zero-config default) a web
/// page on another origin could store fixes and create locate requests with a `no-cors`
/// fetch, and DNS rebinding could read everything. IN-1 (ingest takes a JSON envelope),
/// IN-5 (auth), BY-2 (locate), BY-7 (who may read).
@Suite("Auth off is local only")
struct LocalOnlyTests {
    /// What a `no-cors` fetch from `https://evil.example` can send: a `text/plain` body (or
    /// none of the JSON types), the page's Origin, the server's own Host. Refused; nothing stored.
    @Test func crossSiteWritesAreRefused() async throws {
        try await withServer(.sqlite) { server, _ in
            let envelope = Fixtures.envelope(Fixtures.locations(2))
            let json = String(decoding: WireJSONWriter.encode(envelope), as: UTF8.self)
            let install = envelope.device.installId.wireString
            let evil = ["Origin": "https://evil.example"]
            let plain = try await Self.raw(server, "POST", "/v1/locations", json, ["Content-Type": "text/plain"].merging(evil) { $1 })
            #expect(plain.status == 403, "a text/plain upload from another origin: \(plain.status)")
            // Without an Origin (an old browser, a form post that drops it), the type alone refuses it.
            let originless = try await Self.raw(server, "POST", "/v1/locations", json, ["Content-Type": "text/plain"])
            #expect(originless.status == 415, "a text/plain upload: \(originless.status)")
            let typeless = try await Self.raw(server, "POST", "/v1/locations", json, [:])
            #expect(typeless.status == 415, "an upload without a type: \(typeless.status)")
            let form = try await Self.raw(server, "POST", "/v1/locations", json, ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(form.status == 415, "a form-encoded upload: \(form.status)")
            // Even a JSON type (which would need a preflight a browser cannot pass) from another origin.
            let foreign = try await Self.raw(
                server, "POST", "/v1/locations", json, ["Content-Type": "application/json"].merging(evil) { $1 })
            #expect(foreign.status == 403, "a JSON upload from another origin: \(foreign.status)")
            let locate = try await Self.raw(
                server, "POST", "/v1/devices/\(install)/locate", "", ["Content-Type": "text/plain"].merging(evil) { $1 })
            #expect(locate.status == 403, "a locate request from another origin: \(locate.status)")
            let null = try await Self.raw(server, "POST", "/v1/devices/\(install)/locate", "", ["Origin": "null"])
            #expect(null.status == 403, "a locate request from an opaque origin: \(null.status)")
            let devices = try await HTTP.send("GET", server.base + "/v1/devices")
            #expect((try devices.json()["devices"] as? [Any])?.isEmpty == true, "nothing stored: \(devices.text)")
            // The same-origin dashboard and the SDK (no Origin) still write.
            let own = try await Self.raw(
                server, "POST", "/v1/locations", json, ["Content-Type": "application/json; charset=utf-8", "Origin": server.base])
            #expect(own.status == 200, "\(own.status) \(own.body)")
            #expect(try await HTTP.upload(server, envelope).status == 200)
        }
    }

    /// Issue 50: another local port is another origin. A page on `http://localhost:3000` (a dev
    /// server, any local app) sent a `text/plain` `POST /v1/shares` with its own Origin and got
    /// 201, as only the Origin's host was compared. The Origin must be the server's own: scheme,
    /// host and port (those of the request's `Host`); anything else is 403 and creates nothing.
    @Test func anotherLocalPortOrSchemeIsAnotherOrigin() async throws {
        try await withServer(.sqlite) { server, _ in
            let port = Int(server.base.split(separator: ":").last!)!
            let share = #"{"all":true}"#
            for origin in [
                "http://localhost:3000", "http://127.0.0.1:\(port + 1)", "https://127.0.0.1:\(port)", "http://127.0.0.1",
                "http://localhost:\(port)",
            ] {
                let r = try await Self.raw(server, "POST", "/v1/shares", share, ["Content-Type": "text/plain", "Origin": origin])
                #expect(r.status == 403, "a share created from \(origin): \(r.status) \(r.body.prefix(200))")
            }
            let shares = try await HTTP.send("GET", server.base + "/v1/shares")
            #expect((try shares.json()["shares"] as? [Any])?.isEmpty == true, "no share was created: \(shares.text.prefix(300))")
            // The server's own origin (the dashboard), under any of its names as sent in Host.
            let own = try await Self.raw(server, "POST", "/v1/shares", share, ["Content-Type": "application/json", "Origin": server.base])
            #expect(own.status == 201, "\(own.status) \(own.body.prefix(200))")
            let named = try await Self.raw(
                server, "POST", "/v1/shares", share, ["Content-Type": "application/json", "Origin": "http://localhost:\(port)"],
                host: "localhost:\(port)")
            #expect(named.status == 201, "\(named.status) \(named.body.prefix(200))")
        }
    }

    /// DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own name as Host.
    /// Refused (421) on the routes and on the event-driven live stream; loopback names pass.
    @Test func reboundHostIsRefused() async throws {
        try await withServer(.sqlite) { server, _ in
            let port = server.base.split(separator: ":").last!
            for path in ["/v1/devices", "/v1/live", "/healthz"] {
                let rebound = try await Self.raw(server, "GET", path, nil, [:], host: "evil.example:\(port)")
                #expect(rebound.status == 421, "\(path) with a foreign Host: \(rebound.status)")
            }
            for host in ["localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)", "localhost"] {
                let ok = try await Self.raw(server, "GET", "/v1/devices", nil, [:], host: host)
                #expect(ok.status == 200, "Host \(host): \(ok.status)")
            }
        }
    }

    /// `--allowed-host` admits a name; with auth required the checks stand aside (credentials guard).
    @Test func allowedHostsAndAuthOn() async throws {
        try await withServer(.sqlite, configure: { $0.allowedHosts = ["beekon.lan"] }) { server, _ in
            let allowed = try await Self.raw(server, "GET", "/v1/devices", nil, [:], host: "beekon.lan:8080")
            let other = try await Self.raw(server, "GET", "/v1/devices", nil, [:], host: "other.lan")
            #expect(allowed.status == 200)
            #expect(other.status == 421)
        }
        try await withServer(
            .sqlite,
            configure: {
                $0.authMode = .required
                $0.apiKeys = ["k-0123456789"]
            }
        ) { server, _ in
            let r = try await Self.raw(server, "GET", "/v1/devices", nil, ["Authorization": "Bearer k-0123456789"], host: "ingest.example")
            #expect(r.status == 200)
        }
    }

    /// `--auth auto` is off only for SQLite without keys on a loopback bind (finding 6: it stayed
    /// off on 0.0.0.0).
    @Test(arguments: [
        ("127.0.0.1", false), ("localhost", false), ("::1", false), ("127.0.0.2", false),
        ("0.0.0.0", true), ("::", true), ("192.168.1.20", true), ("beekon.lan", true),
    ])
    func autoAuthIsOnForAnyNonLoopbackBind(_ host: String, _ required: Bool) {
        let config = IngestConfiguration(host: host, database: .sqlite(path: "x.sqlite"), authMode: .auto)
        #expect(config.authRequired == required, "\(host)")
    }

    /// Item 7 (BY-3): the dashboard runs only its own inline script and style, by hash (no
    /// `'unsafe-inline'`), cannot be framed, is not sniffed and sends no referrer; an unsafe
    /// `--tile-url` is refused and never reaches the page.
    @Test func dashboardHeadersAndTileURL() async throws {
        let hostile = "https://t.example/{z}/{x}/{y}.png\"</script><script>alert(1)</script>"
        try await withServer(.sqlite, configure: { $0.tileURL = hostile }) { server, _ in
            let page = try await HTTP.send("GET", server.base + "/dashboard")
            let csp = page.headers["content-security-policy"] ?? ""
            #expect(page.status == 200)
            #expect(!csp.contains("unsafe-inline"), "\(csp)")
            #expect(csp.contains("frame-ancestors 'none'"), "\(csp)")
            #expect(csp.contains("script-src 'sha256-") && csp.contains("style-src 'sha256-"), "\(csp)")
            #expect(page.headers["x-content-type-options"] == "nosniff")
            #expect(page.headers["referrer-policy"] == "no-referrer")
            #expect(!page.text.contains("alert(1)"), "the hostile tile URL is not in the page")
        }
        #expect(IngestConfiguration.isValidTileURL("https://tile.openstreetmap.org/{z}/{x}/{y}.png"))
        #expect(IngestConfiguration.isValidTileURL("http://127.0.0.1:8081/{z}/{x}/{y}.png"))
        for bad in [hostile, "javascript:alert(1)//{z}{x}{y}", "https://t.example/tiles.png", "https://t.example/{z}/{x}/{y}.png?a='b'"] {
            #expect(!IngestConfiguration.isValidTileURL(bad), "\(bad)")
        }
    }

    /// One request on a fresh connection with exactly these headers; its status and body.
    static func raw(
        _ server: TestServer, _ method: String, _ path: String, _ body: String?, _ headers: [String: String],
        host: String? = nil
    ) async throws -> (status: Int, body: String) {
        let connection = try RawHTTPConnection(server.base, timeout: 90)
        let hostValue = host ?? String(server.base.dropFirst("http://".count))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostValue)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        if let body { head += "Content-Length: \(body.utf8.count)\r\n" }
        let request = head + "\r\n" + (body ?? "")
        return await blocking {
            connection.send(request)
            guard let answer = connection.readHead() else { return (0, "") }
            let status = RawHTTPConnection.status(answer)
            if path == "/v1/live" && status == 200 { return (status, "") }
            return (status, String(decoding: connection.readSizedBody(answer) ?? [], as: UTF8.self))
        }
    }
}
