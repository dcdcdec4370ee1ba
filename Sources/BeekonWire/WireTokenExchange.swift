import Foundation

/// A token request to `beekon-ingest`'s `POST /oauth/token` (RFC 6749 §6 refresh, and the
/// server's enrollment-code grant, issue 28). The SDK sends it as a form
/// (`application/x-www-form-urlencoded`, ``formEncoded()``); the server also reads the same
/// fields as a JSON object of strings (``decode(_:contentType:)``).
public enum WireTokenRequest: Hashable, Sendable {
    /// `grant_type=refresh_token&refresh_token=…`: rotates a refresh token.
    case refresh(refreshToken: String)
    /// `grant_type=enrollment_code&code=…&install_id=…`: a device's first tokens, bound to its install.
    case enrollment(code: String, installId: UUID)

    /// The request's fields by name.
    public var fields: [String: String] {
        switch self {
        case .refresh(let token): return ["grant_type": "refresh_token", "refresh_token": token]
        case .enrollment(let code, let install):
            return ["grant_type": "enrollment_code", "code": code, "install_id": install.wireString]
        }
    }

    /// The form body (``WireForm/encode(_:)``: keys sorted).
    public func formEncoded() -> Data { Data(WireForm.encode(fields).utf8) }

    /// Reads a request: a JSON object (when `contentType` says JSON or the body starts with `{`;
    /// string members, numbers as their text) or a form.
    /// - Throws: `WireDecodingError.invalid` naming `grant_type` for a grant other than the two,
    ///   `refresh_token` for a refresh without one, `code` for an enrollment without a code or
    ///   without an `install_id` UUID.
    public static func decode(_ body: Data, contentType: String?) throws(WireDecodingError) -> WireTokenRequest {
        let looksJSON = contentType?.lowercased().contains("json") == true || body.first(where: { $0 > 0x20 }) == UInt8(ascii: "{")
        let fields = looksJSON ? jsonFields(body) : WireForm.decode(body)
        switch fields["grant_type"] {
        case "refresh_token":
            guard let token = fields["refresh_token"], !token.isEmpty else {
                throw .invalid(path: "refresh_token", reason: "refresh_token is missing")
            }
            return .refresh(refreshToken: token)
        case "enrollment_code":
            guard let code = fields["code"], !code.isEmpty, let install = fields["install_id"].flatMap(UUID.init(uuidString:)) else {
                throw .invalid(path: "code", reason: "send code and install_id (a UUID)")
            }
            return .enrollment(code: code, installId: install)
        default:
            throw .invalid(path: "grant_type", reason: "grant_type must be refresh_token or enrollment_code")
        }
    }

    /// The string (and number) members of a JSON object; empty when `body` is not one.
    private static func jsonFields(_ body: Data) -> [String: String] {
        enum Scalar: Decodable {
            case text(String)
            case other
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let s = try? c.decode(String.self) {
                    self = .text(s)
                } else if (try? c.decode(Bool.self)) != nil {
                    self = .other
                } else if let i = try? c.decode(Int64.self) {
                    self = .text(String(i))
                } else if let d = try? c.decode(Double.self) {
                    self = .text(d.description)
                } else {
                    self = .other
                }
            }
        }
        guard let object = try? JSONDecoder().decode([String: Scalar].self, from: body) else { return [:] }
        return object.compactMapValues { if case .text(let s) = $0 { return s } else { return nil } }
    }
}

/// `beekon-ingest`'s answer to a granted token request (RFC 6749 §5.1):
/// `{"access_token","expires_in","refresh_token","token_type":"Bearer"}`, keys sorted.
public struct WireTokenGrant: Hashable, Sendable {
    /// The short-lived bearer token for uploads.
    public var accessToken: String
    /// The next refresh token (a presented one is retired).
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// Always `Bearer`.
    public var tokenType: String

    /// Creates a grant.
    public init(accessToken: String, refreshToken: String, expiresIn: Int, tokenType: String = "Bearer") {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.tokenType = tokenType
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 96 + accessToken.utf8.count + refreshToken.utf8.count)
        w.raw("{\"access_token\":")
        w.string(accessToken)
        w.raw(",\"expires_in\":")
        w.raw(String(expiresIn))
        w.raw(",\"refresh_token\":")
        w.string(refreshToken)
        w.raw(",\"token_type\":")
        w.string(tokenType)
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads a grant; unknown members are ignored.
    /// - Throws: `WireDecodingError` when a member is missing or mistyped, a token is empty or
    ///   `expires_in` is negative.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireTokenGrant {
        struct Raw: Decodable {
            var access_token: String
            var refresh_token: String
            var expires_in: Int
            var token_type: String
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        guard !raw.access_token.isEmpty else { throw .invalid(path: "access_token", reason: "must not be empty") }
        guard !raw.refresh_token.isEmpty else { throw .invalid(path: "refresh_token", reason: "must not be empty") }
        guard raw.expires_in >= 0 else { throw .invalid(path: "expires_in", reason: "must not be negative") }
        return WireTokenGrant(
            accessToken: raw.access_token, refreshToken: raw.refresh_token, expiresIn: raw.expires_in, tokenType: raw.token_type)
    }
}

/// `application/x-www-form-urlencoded`, as browsers serialise it and servers read it.
public enum WireForm {
    /// `fields` with keys sorted for a stable body: unreserved `A–Z a–z 0–9 * - . _` kept,
    /// space as `+`, every other UTF-8 byte as `%XX`.
    public static func encode(_ fields: [String: String]) -> String {
        fields.keys.sorted().map { "\(escape($0))=\(escape(fields[$0]!))" }.joined(separator: "&")
    }

    /// One name or value, escaped as ``encode(_:)`` does.
    public static func escape(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// The fields of a form body (`+` as space, `%XX` decoded; a later duplicate wins).
    public static func decode(_ body: Data) -> [String: String] {
        let text = String(decoding: body, as: UTF8.self)
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            out[decode(kv[0])] = kv.count > 1 ? decode(kv[1]) : ""
        }
        return out
    }
}
