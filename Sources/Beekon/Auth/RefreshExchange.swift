import BeekonWire
import Crypto
import Foundation

/// The pure parts of a token refresh (AU-3..5): building the request, reading the
/// response, classifying the outcome.
enum RefreshExchange {
    /// AU-4: the refresh POST's deadline.
    static let timeout: Duration = .seconds(15)

    /// What a refresh attempt means.
    enum Outcome: Sendable, Equatable {
        /// 2xx with a token: adopt these tokens.
        case adopt(TokenSet)
        /// 2xx without a token, 3xx, other 4xx: the credentials are dead until re-seeded.
        case dead(status: Int)
        /// 408/429/5xx/network/timeout: back off and retry.
        case transient(String)
    }

    // MARK: - Request

    /// The POST to `url` with the templated payload and headers in `config`'s body format.
    static func request(url: URL, config: AuthConfig, tokens: TokenSet) -> HTTPRequest {
        var headers: [String: String] = [:]
        for (name, template) in config.refreshHeaders {
            if let value = substitute(template, tokens: tokens), !value.trimmingCharacters(in: .whitespaces).isEmpty {
                headers[name] = value
            }
        }
        var fields: [String: String] = [:]
        for (name, template) in config.refreshPayload {
            if let value = substitute(template, tokens: tokens) { fields[name] = value }
        }
        let body: Data
        let contentType: String
        switch config.refreshBodyFormat {
        case .form:
            contentType = "application/x-www-form-urlencoded"
            body = Data(WireForm.encode(fields).utf8)
        case .json:
            contentType = "application/json"
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            body = (try? encoder.encode(fields)) ?? Data("{}".utf8)
        }
        headers = headers.filter { $0.key.lowercased() != "content-type" && $0.key.lowercased() != "content-length" }
        headers["Content-Type"] = contentType
        headers["Accept"] = headers.first { $0.key.lowercased() == "accept" }?.value ?? "application/json"
        return HTTPRequest(url: url, method: "POST", headers: headers, body: body, timeout: timeout)
    }

    /// `template` with `{accessToken}` / `{refreshToken}` replaced; nil when it refers to a
    /// token the SDK does not have (the field or header is then left out).
    static func substitute(_ template: String, tokens: TokenSet) -> String? {
        var out = template
        for (placeholder, value) in [("{accessToken}", tokens.accessToken), ("{refreshToken}", tokens.refreshToken)]
        where out.contains(placeholder) {
            guard let value, !value.isEmpty else { return nil }
            out = out.replacingOccurrences(of: placeholder, with: value)
        }
        return out
    }

    // MARK: - Response

    /// AU-5: what `result` means; on adoption, the new set (rotation keeps `current`'s
    /// refresh token when the response has none). `now` resolves relative expiries.
    static func classify(
        _ result: Result<HTTPResponse, HTTPTransportError>, current: TokenSet,
        mapping: AuthConfig.ResponseMapping?, now: Date
    ) -> Outcome {
        switch result {
        case .failure(let e):
            return .transient("\(e)")
        case .success(let r):
            switch r.status {
            case 200...299:
                guard let tokens = parse(r.body, current: current, mapping: mapping, now: now) else {
                    return .dead(status: r.status)
                }
                return .adopt(tokens)
            case 408, 429, 500...599:
                return .transient("HTTP \(r.status)")
            case 300...499:
                return .dead(status: r.status)
            default:
                return .transient("HTTP \(r.status)")
            }
        }
    }

    /// AU-4: the access token from `mapping.accessToken`, else `access_token`, `accessToken`,
    /// `token`; expiry from the mapping, else `expiresAt`/`expiresIn`/`expires_at`/`expires_in`
    /// (relative ⇒ now + value; numbers or numeric strings); a refresh token replaces the
    /// old one. Nil when the body is not a JSON object or carries no token.
    /// A `beekon-ingest` grant (``WireTokenGrant``) is read by BeekonWire, the code the server
    /// writes it with; the lookup is for other token endpoints and for a custom `mapping`.
    static func parse(_ body: Data, current: TokenSet, mapping: AuthConfig.ResponseMapping?, now: Date) -> TokenSet? {
        if mapping == nil, let grant = try? WireTokenGrant.decode(body) {
            return TokenSet(
                accessToken: grant.accessToken, refreshToken: grant.refreshToken,
                expiresAt: now.timeIntervalSince1970 + Double(grant.expiresIn))
        }
        guard let root = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            root is [String: Any]
        else { return nil }
        func string(_ paths: [String?]) -> String? {
            for case let path? in paths {
                if let s = lookup(root, path).flatMap(tokenString), !s.isEmpty { return s }
            }
            return nil
        }
        guard let access = string([mapping?.accessToken, "access_token", "accessToken", "token"]) else { return nil }
        let refresh = string([mapping?.refreshToken, "refresh_token", "refreshToken"])
        let candidates: [(String?, Bool)] = [
            (mapping?.expiresAt, false), (mapping?.expiresIn, true),
            ("expiresAt", false), ("expiresIn", true), ("expires_at", false), ("expires_in", true),
        ]
        var expiresAt: Double?
        for case let (path?, relative) in candidates {
            if let n = lookup(root, path).flatMap(number) {
                expiresAt = relative ? now.timeIntervalSince1970 + n : n
                break
            }
        }
        return TokenSet(accessToken: access, refreshToken: refresh ?? current.refreshToken, expiresAt: expiresAt)
    }

    /// Follows a dot-path through objects (and arrays by index); a key that itself
    /// contains dots is matched first.
    static func lookup(_ root: Any, _ path: String) -> Any? {
        if let object = root as? [String: Any], let direct = object[path] { return direct }
        var node: Any? = root
        for part in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            if let object = node as? [String: Any] {
                node = object[part]
            } else if let array = node as? [Any], let i = Int(part), array.indices.contains(i) {
                node = array[i]
            } else {
                return nil
            }
        }
        return node
    }

    private static func tokenString(_ value: Any) -> String? {
        if let s = value as? String { return s.trimmingCharacters(in: .whitespacesAndNewlines) }
        return nil
    }

    /// A finite number, or a string holding one ("3600", " 3600.5 ").
    static func number(_ value: Any) -> Double? {
        if let s = value as? String { return Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil } }
        #if canImport(Darwin)
            if let n = value as? NSNumber, CFGetTypeID(n) == CFBooleanGetTypeID() { return nil }
        #else
            if value is Bool { return nil }
        #endif
        if let n = value as? NSNumber { return n.doubleValue.isFinite ? n.doubleValue : nil }
        if let d = value as? Double { return d.isFinite ? d : nil }
        if let i = value as? Int { return Double(i) }
        return nil
    }

    /// A stable fingerprint of the seed tokens (SHA-256, hex): persisted instead of the
    /// seed itself to tell "the same seed again" from "a new seed". Nil without seed tokens.
    static func seedFingerprint(_ config: AuthConfig) -> String? {
        guard config.hasSeedTokens else { return nil }
        var h = SHA256()
        h.update(data: Data("beekon-seed-v1\u{0}".utf8))
        h.update(data: Data((config.accessToken ?? "").utf8))
        h.update(data: Data("\u{0}".utf8))
        h.update(data: Data((config.refreshToken ?? "").utf8))
        return h.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
