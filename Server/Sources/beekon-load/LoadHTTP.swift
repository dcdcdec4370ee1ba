import AsyncHTTPClient
import BeekonLoad
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP side of the load generator: one pooled client for every URL, JSON helpers, the
/// devices' credentials and the read-back through the read API.
struct LoadHTTP: Sendable {
    let client: HTTPClient
    /// `Bearer <admin key>`, or nil when the servers run with auth off.
    let admin: String?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(connectionsPerHost: Int, admin: String?) {
        var configuration = HTTPClient.Configuration()
        // Idle pooled connections are dropped before the server's --idle-timeout (60 s) closes them under us.
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connectionsPerHost)
        configuration.timeout = .init(connect: .seconds(30), read: .seconds(120))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.admin = admin.map { "Bearer " + $0 }
    }

    /// One request; the status and the body (up to 64 MiB).
    func call(
        _ method: HTTPMethod, _ url: String, body: [UInt8]? = nil, headers: [(String, String)] = [], authorization: String? = nil
    ) async throws -> (status: Int, body: ByteBuffer) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), bytes)
    }

    /// A JSON object answer of `call`, or a failure naming the status.
    func json(_ method: HTTPMethod, _ url: String, form: String? = nil, json: [String: Any]? = nil, authorization: String? = nil)
        async throws -> [String: Any]
    {
        var headers: [(String, String)] = []
        var body: [UInt8]?
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = Array(form.utf8)
        } else if let json {
            headers.append(("Content-Type", "application/json"))
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        let (status, answer) = try await call(method, url, body: body, headers: headers, authorization: authorization)
        guard (200..<300).contains(status), let object = try? JSONSerialization.jsonObject(with: Data(buffer: answer)) as? [String: Any]
        else { throw Failure(description: "\(method) \(url): \(status) \(String(buffer: answer).prefix(200))") }
        return object
    }

    /// Access tokens for `installs` the way an app gets them: one enrollment code with a use per
    /// device (`POST /v1/enrollments`, admin key), then each device exchanges it at
    /// `POST /oauth/token` (`grant_type=enrollment_code`). Nil for every device when auth is off.
    func enroll(_ installs: [String], baseURL: String) async throws -> [String: String] {
        guard let admin, !installs.isEmpty else { return [:] }
        let code =
            try await json(
                .POST, baseURL + "/v1/enrollments", json: ["uses": installs.count, "ttl_seconds": 86_400, "label": "beekon-load"],
                authorization: admin)["code"] as? String
        guard let code else { throw Failure(description: "POST /v1/enrollments: no code") }
        var tokens: [String: String] = [:]
        try await withThrowingTaskGroup(of: (String, String).self) { group in
            var next = installs.makeIterator()
            func start() {
                guard let install = next.next() else { return }
                group.addTask {
                    let form = "grant_type=enrollment_code&code=\(code.formEncoded)&install_id=\(install)"
                    let answer = try await json(.POST, baseURL + "/oauth/token", form: form)
                    guard let token = answer["access_token"] as? String else { throw Failure(description: "no access_token") }
                    return (install, token)
                }
            }
            for _ in 0..<32 { start() }
            while let (install, token) = try await group.next() {
                tokens[install] = token
                start()
            }
        }
        return tokens
    }

    /// Every fix id the read API holds for `install`, every page.
    func storedFixIDs(install: String, baseURL: String) async throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            var url = baseURL + "/v1/devices/\(install)/fixes?limit=5000"
            if let cursor { url += "&cursor=" + cursor.formEncoded }
            let page = try await json(.GET, url, authorization: admin)
            ids += (page["fixes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = page["next_cursor"] as? String
        } while cursor != nil
        return ids
    }

    /// Reads back every device's fixes (16 at a time) and compares them with what was sent.
    func readBack(sent: [String: [String]], baseURL: String) async throws -> ReadBackCheck {
        var stored: [String: [String]] = [:]
        try await withThrowingTaskGroup(of: (String, [String]).self) { group in
            var next = sent.keys.sorted().makeIterator()
            func start() {
                guard let install = next.next() else { return }
                group.addTask { (install, try await storedFixIDs(install: install, baseURL: baseURL)) }
            }
            for _ in 0..<16 { start() }
            while let (install, ids) = try await group.next() {
                stored[install] = ids
                start()
            }
        }
        return ReadBackCheck.compare(sent: sent, stored: stored)
    }
}

extension String {
    /// Percent-encoded for a form value or a query parameter.
    var formEncoded: String {
        addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? self
    }
}

/// A server the timed uploads go to: where to connect, the `Host` header and the URL's path prefix.
struct UploadTarget {
    let sender: SenderTarget
    /// `host[:port]`, as the `Host` header says it.
    let host: String
    /// The URL's path without a trailing slash (empty for a server at the root).
    let path: String

    /// Parses an `http://` or `https://` URL and resolves its host once.
    init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme, ["http", "https"].contains(scheme),
            let host = components.host
        else {
            throw LoadHTTP.Failure(description: "\(url): give an http:// or https:// URL with a host")
        }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        // A certificate is checked against the host name, or against the address for an IP literal (no SNI then).
        let isAddress = (try? SocketAddress(ipAddress: host, port: port)) != nil
        sender = SenderTarget(
            address: try SocketAddress.makeAddressResolvingHost(host, port: port), tls: scheme == "https",
            serverName: isAddress ? nil : host)
        let named = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host  // an IPv6 literal is bracketed in Host
        self.host = components.port == nil ? named : "\(named):\(port)"
        path = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
    }
}
