import Crypto
import Foundation

/// Signs and verifies stateless access tokens: `bat1.<subject>.<expiry>.<mac>`
/// (subject base64url, expiry in Unix seconds, HMAC-SHA256 over the rest).
/// The key lives in the database, so every instance on it verifies every token.
package struct AccessTokenSigner: Sendable {
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// Creates a signer with raw key bytes (at least 32).
    package init(key: [UInt8]) {
        self.keyBytes = key
    }

    /// A key for another purpose derived from this one (HMAC-SHA256 of `label`), the same on
    /// every instance on the database; the signing key itself never leaves the signer.
    func derivedKey(label: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(label.utf8), using: key))
    }

    /// Issues a token for `subject` that expires at `expiresAt` (Unix seconds).
    package func sign(subject: String, expiresAt: Int64) -> String {
        let body = "bat1.\(Base64URL.encode(Array(subject.utf8))).\(expiresAt)"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(body.utf8), using: key)
        return body + "." + Base64URL.encode(Array(mac))
    }

    /// Returns the subject of a valid, unexpired token; nil otherwise.
    package func verify(_ token: String, nowSeconds: Int64) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "bat1", let expiry = Int64(parts[2]), expiry > nowSeconds,
            let mac = Base64URL.decode(String(parts[3])),
            let subjectBytes = Base64URL.decode(String(parts[1]))
        else { return nil }
        let body = parts[0...2].joined(separator: ".")
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(body.utf8), using: key) else { return nil }
        return String(decoding: subjectBytes, as: UTF8.self)
    }
}

/// Unpadded base64url (RFC 4648 §5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }
}
