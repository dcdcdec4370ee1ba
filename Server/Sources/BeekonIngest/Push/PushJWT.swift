import BeekonWire
import Crypto
import Foundation
import _CryptoExtras

/// Compact JWS (RFC 7515) for the push providers: ES256 provider tokens for APNs and the
/// RS256 service-account assertion FCM's token endpoint exchanges for an access token.
enum PushJWT {
    /// `base64url(header).base64url(claims).base64url(signature)`.
    static func compact(header: [String: String], claims: [String: JSONValue], sign: ([UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64URL.encode(object(header.mapValues { .string($0) })) + "." + Base64URL.encode(object(claims))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    /// An APNs provider token: header `{"alg":"ES256","kid":<key id>}`, claims `{"iss":<team id>,"iat":<seconds>}`,
    /// signed with the `.p8` key (P-256, the raw r‖s signature JWS asks for).
    static func apns(key: P256.Signing.PrivateKey, keyId: String, teamId: String, issuedAt: Int64) throws -> String {
        try compact(header: ["alg": "ES256", "kid": keyId], claims: ["iss": .string(teamId), "iat": .int(issuedAt)]) {
            Array(try key.signature(for: $0).rawRepresentation)
        }
    }

    /// A Google service-account assertion for FCM (RS256, PKCS#1 v1.5 as RFC 7518 §3.3 names it).
    static func serviceAccount(
        key: _RSA.Signing.PrivateKey, keyId: String?, email: String, scope: String, audience: String, issuedAt: Int64
    ) throws -> String {
        var header = ["alg": "RS256", "typ": "JWT"]
        if let keyId { header["kid"] = keyId }
        return try compact(
            header: header,
            claims: [
                "iss": .string(email), "scope": .string(scope), "aud": .string(audience), "iat": .int(issuedAt),
                "exp": .int(issuedAt + 3600),
            ]
        ) { Array(try key.signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation) }
    }

    /// A claim value.
    enum JSONValue: Sendable {
        case string(String)
        case int(Int64)
    }

    /// A flat JSON object with its keys sorted (stable bytes).
    static func object(_ fields: [String: JSONValue]) -> [UInt8] {
        var w = WireJSONWriter(capacity: 128)
        w.raw("{")
        for (i, (k, v)) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.string(k)
            w.raw(":")
            switch v {
            case .string(let s): w.string(s)
            case .int(let n): w.raw(String(n))
            }
        }
        w.raw("}")
        return w.bytes
    }
}
