import Foundation

/// Strict UTF-8 decoding for the package's deployment targets: the standard library's
/// `String(validating:as:)` is `@available(macOS 15.0, iOS 18.0, …)` in Apple's SDKs, so code that
/// runs on iOS 16 / macOS 13 cannot call it (Linux never enforced that, issue 48).
public enum ValidUTF8 {
    /// `bytes` as a string when they are well-formed UTF-8, nil when they are not: the answer of
    /// `String(validating: bytes, as: UTF8.self)`.
    ///
    /// `String(decoding:as:)` copies well-formed UTF-8 byte for byte and replaces each ill-formed
    /// sequence by U+FFFD (EF BF BD), which never equals the bytes it replaces (those would have
    /// decoded as themselves); so the input was well-formed exactly when the copy is identical.
    /// The decoding validates at the standard library's speed; the comparison is one `memcmp`.
    public static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        let identical = text.withUTF8 { copy in
            copy.count == bytes.count && (copy.isEmpty || memcmp(copy.baseAddress!, bytes.baseAddress!, copy.count) == 0)
        }
        return identical ? text : nil
    }

    /// `data` as a string when it is well-formed UTF-8, nil when it is not.
    public static func string(_ data: Data) -> String? { data.withUnsafeBytes { string($0) } }
}
