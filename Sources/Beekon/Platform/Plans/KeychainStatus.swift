/// What a Keychain `OSStatus` means for the token vault (AU-9). The values are the
/// Security framework's: `errSecSuccess` 0, `errSecItemNotFound` −25300,
/// `errSecInteractionNotAllowed` −25308 (the item is not readable yet: the device has
/// not been unlocked since boot, under `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
package enum KeychainStatus: Sendable, Hashable {
    /// The operation succeeded.
    case success
    /// No item.
    case notFound
    /// Not readable or writable now; try again later. Nothing may be overwritten.
    case locked
    /// Any other failure.
    case failed(Int32)

    /// Classifies an `OSStatus`.
    package init(_ status: Int32) {
        switch status {
        case 0: self = .success
        case -25300: self = .notFound
        case -25308: self = .locked
        default: self = .failed(status)
        }
    }

    /// The error a vault operation throws for this status, or nil on success / not found.
    package func error(_ operation: String) -> SecretStoreError? {
        switch self {
        case .success, .notFound: return nil
        case .locked: return .unavailable("keychain \(operation) deferred: the device has not been unlocked since it started")
        case .failed(let status): return .io("keychain \(operation) failed (OSStatus \(status))")
        }
    }
}
