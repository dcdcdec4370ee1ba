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
    ///
    /// Every device request verifies one, so this stays off Foundation's string APIs (issue 32:
    /// they made verification 3.6 % of the server's CPU at 1,000 uploads a second).
    package func verify(_ token: String, nowSeconds: Int64) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "bat1", let expiry = Int64(parts[2]), expiry > nowSeconds,
            let mac = Base64URL.decode(parts[3]),
            let subjectBytes = Base64URL.decode(parts[1])
        else { return nil }
        // The signed text: everything before the last dot.
        let body = Array(token.utf8[..<token.utf8.index(before: parts[3].startIndex)])
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: body, using: key) else { return nil }
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

    /// The bytes of unpadded base64url `text`; nil for any other character (`+`, `/` and `=`
    /// included), a length no encoding has (4k + 1) or non-zero bits after the last byte.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in utf8 {
            let value: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = (accumulator << 6 | UInt32(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return out
    }
}
