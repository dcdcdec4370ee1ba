import Foundation

/// Where the SDK keeps one small secret blob (the live token set, AU-9): encrypted at
/// rest, surviving process death. On Linux `FileSecretStore` (AES-GCM file with a
/// separate 0600 key file next to the database); on Apple platforms `KeychainSecretStore`.
/// Tests inject an in-memory store.
public protocol SecretStore: Sendable {
    /// The stored blob, or nil when nothing is stored. Throws when something is stored
    /// but cannot be read or authenticated; the SDK then treats it as "no tokens".
    func load() throws(SecretStoreError) -> Data?
    /// Replaces the stored blob atomically.
    func save(_ data: Data) throws(SecretStoreError)
    /// Forgets the stored blob (no error when there is none).
    func delete() throws(SecretStoreError)
}

/// Why a `SecretStore` operation failed. Messages never contain the secret.
public enum SecretStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file system or keychain refused the operation.
    case io(String)
    /// Stored data exists but failed to decrypt or authenticate (tampered, wrong key).
    case corrupt(String)
    /// Not readable or writable yet (the Keychain of a device not unlocked since boot):
    /// the SDK defers and tries again later, and never overwrites what is stored.
    case unavailable(String)

    public var description: String {
        switch self {
        case .io(let why): return "secret store I/O error: \(why)"
        case .corrupt(let why): return "secret store unreadable: \(why)"
        case .unavailable(let why): return "secret store not available yet: \(why)"
        }
    }
}
