/// The size limits of schema v1's free-text fields, in bytes of UTF-8.
///
/// Counted in bytes, not characters: one grapheme cluster can carry any number of
/// combining marks, so a character limit bounds nothing the server stores (issue 28).
/// The SDK checks the same limits before it sends, so a device never builds a batch
/// the server drops.
public enum WireLimits {
    /// `device.platform` and `device.sdk_version`.
    public static let shortTextBytes = 64
    /// `device.model`.
    public static let modelBytes = 128
    /// Identifiers: `geofence_id`, `privacy_zone`, `proximity_events[].region` and `.scanner`.
    public static let identifierBytes = 100
    /// One key of `extras`.
    public static let extrasKeyBytes = 64
    /// One value of `extras`.
    public static let extrasValueBytes = 512
    /// Entries in `extras`.
    public static let extrasEntries = 32
    /// All keys and values of `extras` together.
    public static let extrasTotalBytes = 4_096

    /// Why `extras` breaks the limits (nil: within them): a field path and a reason.
    public static func extrasProblem(_ extras: [String: String]) -> (path: String, reason: String)? {
        if extras.count > extrasEntries { return ("extras", "must have at most \(extrasEntries) entries") }
        var total = 0
        for (key, value) in extras {
            if key.utf8.count > extrasKeyBytes { return ("extras", "a key must be at most \(extrasKeyBytes) bytes of UTF-8") }
            if value.utf8.count > extrasValueBytes {
                return ("extras.\(key)", "must be at most \(extrasValueBytes) bytes of UTF-8")
            }
            total += key.utf8.count + value.utf8.count
        }
        if total > extrasTotalBytes { return ("extras", "keys and values must total at most \(extrasTotalBytes) bytes of UTF-8") }
        return nil
    }
}

extension WireLimits {
    /// The longest prefix of `s`, whole characters only, that fits in `bytes` bytes of UTF-8.
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
