import Foundation

/// Keeps secrets out of logs, errors and descriptions (AU-9). Every log line the auth
/// code writes goes through these helpers; tokens are never interpolated directly.
enum Redaction {
    /// The placeholder that replaces a secret.
    static let placeholder = "<redacted>"

    /// `<redacted>` for a present secret, `nil` for an absent one — never the secret itself.
    static func mask(_ secret: String?) -> String {
        guard let secret, !secret.isEmpty else { return "nil" }
        return placeholder
    }

    /// `text` with every occurrence of each secret (and its percent-encoded form) replaced
    /// by `<redacted>`: for error messages that might echo a request (e.g. a network
    /// error naming a URL with a token in it).
    static func scrub(_ text: String, secrets: [String?]) -> String {
        var out = text
        for case let secret? in secrets where secret.count >= 4 {
            out = out.replacingOccurrences(of: secret, with: placeholder)
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
                out = out.replacingOccurrences(of: encoded, with: placeholder)
            }
        }
        return out
    }
}
