import Crypto
import Foundation
import Testing

@testable import BeekonIngest

extension Ingest {
    /// The credential parsing every request runs (issue 32 moved it off Foundation's string
    /// APIs): the same answers as Foundation where it was used before, and stricter where the
    /// old decoder was lax.
    @Suite struct CredentialParsing {
        /// Unpadded base64url decodes what Foundation's base64 decodes, for every length 0–64.
        @Test func base64URLDecodesWhatFoundationDecodes() {
            var generator = SystemRandomNumberGenerator()
            for length in 0...64 {
                for _ in 0..<8 {
                    let bytes = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
                    let encoded = Base64URL.encode(bytes)
                    #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
                    #expect(Base64URL.decode(encoded) == bytes, "\(encoded)")
                    #expect(Base64URL.decode(encoded[...]) == bytes)
                }
            }
        }

        /// Anything that is not canonical unpadded base64url is refused: the standard alphabet's
        /// `+` and `/`, padding, a length no encoding has, and stray bits after the last byte.
        @Test func base64URLRefusesWhatIsNotCanonical() {
            #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
            #expect(Base64URL.decode("+/8") == nil)
            #expect(Base64URL.decode("-_8=") == nil)
            #expect(Base64URL.decode("QUJD") == Array("ABC".utf8))
            #expect(Base64URL.decode("QUJDR") == nil)  // 4k + 1 characters
            #expect(Base64URL.decode("QR") == nil)  // "Q" = 0b010000, then 0b010001: stray bits
            #expect(Base64URL.decode("QQ") == Array("A".utf8))
            #expect(Base64URL.decode("QU JD") == nil)
            #expect(Base64URL.decode("QUJDé") == nil)
        }

        /// Trimming matches Foundation's `CharacterSet.whitespaces` (tabs and Unicode space
        /// separators), and leaves newlines and other characters alone.
        @Test(arguments: [
            "", " ", "\t \t", "key", "  key  ", "\tkey\t", "\u{00A0}key\u{2003}", "k e y", " \u{3000}k\u{3000} ", "\nkey\n",
            "key\r", "é ", " 🙂 ",
        ])
        func trimmingMatchesFoundation(_ text: String) {
            #expect(String(Authenticator.trimmed(text[...])) == text.trimmingCharacters(in: .whitespaces))
        }

        /// `Authorization`: the credential after `Bearer ` in any case, else the whole value.
        @Test func authorizationValuesGiveTheirCredential() {
            #expect(Authenticator.credential(ofAuthorization: "Bearer abc") == "abc")
            #expect(Authenticator.credential(ofAuthorization: "  bEARER   abc  ") == "abc")
            #expect(Authenticator.credential(ofAuthorization: "abc") == "abc")
            #expect(Authenticator.credential(ofAuthorization: "Bearer") == "Bearer")
            #expect(Authenticator.credential(ofAuthorization: "Bearerx abc") == "Bearerx abc")
            #expect(Authenticator.credential(ofAuthorization: "Bearer\u{0}abc") == "Bearer\u{0}abc")
        }

        /// A token verifies with its key only, until it expires, and not once any part changed.
        @Test func accessTokensVerifyOnlyAsIssued() {
            let signer = AccessTokenSigner(key: Array(repeating: 7, count: 32))
            let token = signer.sign(subject: "truck-7 ✓", expiresAt: 2_000)
            #expect(signer.verify(token, nowSeconds: 1_999) == "truck-7 ✓")
            #expect(signer.verify(token, nowSeconds: 2_000) == nil)
            #expect(AccessTokenSigner(key: Array(repeating: 8, count: 32)).verify(token, nowSeconds: 1_000) == nil)
            var parts = token.split(separator: ".").map(String.init)
            for i in parts.indices {
                var changed = parts
                changed[i] = i == 2 ? "2001" : String(changed[i].dropLast()) + (changed[i].last == "A" ? "B" : "A")
                #expect(signer.verify(changed.joined(separator: "."), nowSeconds: 1_000) == nil, "part \(i)")
            }
            parts.append("x")
            #expect(signer.verify(parts.joined(separator: "."), nowSeconds: 1_000) == nil)
            #expect(signer.verify(token + "=", nowSeconds: 1_000) == nil)
        }
    }
}
