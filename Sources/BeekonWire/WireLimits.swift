/// The size limits of schema v1's free-text fields, in characters as JSON Schema's
/// `maxLength` counts them: Unicode code points (scalars), each at most 4 bytes of UTF-8.
///
/// Never grapheme clusters: one grapheme cluster can carry any number of combining marks,
/// so a limit in `String.count` bounded nothing the server stores (issue 28: 400 KB passed
/// as one "character"). A limit of N code points bounds a field to 4·N bytes. The SDK checks
/// the same limits before it sends, so a device never builds a batch the server drops.
public enum WireLimits {
    /// `device.platform` and `device.sdk_version` (at most 256 bytes).
    public static let shortText = 64
    /// `device.model` (at most 512 bytes).
    public static let model = 128
    /// Identifiers: `geofence_id`, `privacy_zone`, `proximity_events[].region` and `.scanner` (at most 400 bytes).
    public static let identifier = 100
    /// One key of `extras`.
    public static let extrasKey = 64
    /// One value of `extras`.
    public static let extrasValue = 512
    /// Entries in `extras`.
    public static let extrasEntries = 32
    /// All keys and values of `extras` together (at most 16 KB).
    public static let extrasTotal = 4_096

    /// The length schema v1 limits: Unicode code points, as JSON Schema's `maxLength` counts.
    public static func length(_ s: String) -> Int { s.unicodeScalars.count }

    /// The words of a limit in an error: "N characters (Unicode code points, at most 4·N bytes)".
    public static func describe(_ limit: Int) -> String {
        "\(limit) characters (Unicode code points, at most \(limit * 4) bytes of UTF-8)"
    }

    /// Why a text field cannot be stored (nil: it can): U+0000. JSON can carry it (`\u0000`)
    /// and SQLite stores it, but PostgreSQL's `text` cannot hold it, so a batch with one would
    /// be stored by one store and fail on the other. Every free-text field of every message is
    /// refused with it, on both stores, with the same 422.
    public static func textProblem(_ s: String) -> String? {
        s.utf8.contains(0) ? "must not contain U+0000" : nil
    }

    /// Why `extras` breaks the limits (nil: within them): a field path and a reason.
    public static func extrasProblem(_ extras: [String: String]) -> (path: String, reason: String)? {
        if extras.count > extrasEntries { return ("extras", "must have at most \(extrasEntries) entries") }
        var total = 0
        for (key, value) in extras {
            if length(key) > extrasKey { return ("extras", "a key must be at most \(describe(extrasKey))") }
            if textProblem(key) != nil { return ("extras", "a key must not contain U+0000") }
            if length(value) > extrasValue { return ("extras.\(key)", "must be at most \(describe(extrasValue))") }
            if let problem = textProblem(value) { return ("extras.\(key)", problem) }
            total += length(key) + length(value)
        }
        if total > extrasTotal { return ("extras", "keys and values must total at most \(describe(extrasTotal))") }
        return nil
    }
}

extension WireLimits {
    /// The longest prefix of `s`, whole characters only, that fits in `bytes` bytes of UTF-8
    /// (and so in as many code points).
    public static func prefix(_ s: String, bytes: Int) -> String {
        guard s.utf8.count > bytes else { return s }
        var out = ""
        var used = 0
        for c in s {
            let n = c.utf8.count
            guard used + n <= bytes else { break }
            out.append(c)
            used += n
        }
        return out
    }
}
