import BeekonPrimitives
import Crypto
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Linux vault (AU-9): the blob is sealed with AES-256-GCM into `path`; the 256-bit
/// key lives in a separate file (`keyPath`) created with mode 0600 via
/// `O_CREAT|O_EXCL` (so the mode never depends on the umask and two processes never
/// both create a key). The sealed file is replaced atomically (temp file + rename).
/// Anything that fails to open — tampered, truncated, other key — is reported as
/// `.corrupt` and never crashes.
public struct FileSecretStore: SecretStore {
    /// The sealed file.
    public let path: String
    /// The key file.
    public let keyPath: String
    private static let magic = Data("BKV1".utf8)
    private static let associated = Data("beekon-token-vault-v1".utf8)

    /// A vault at `path` with its key in `keyPath`.
    public init(path: String, keyPath: String) {
        self.path = path
        self.keyPath = keyPath
    }

    /// The vault next to a database: `<db>.tokens` and `<db>.tokens.key`.
    public init(databasePath: String) {
        self.init(path: databasePath + ".tokens", keyPath: databasePath + ".tokens.key")
    }

    /// - Throws: `SecretStoreError` when the vault or its key cannot be read or does not decrypt (tampered or foreign file).
    public func load() throws(SecretStoreError) -> Data? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let sealed = FileManager.default.contents(atPath: path) else { throw .io("cannot read the token vault") }
        guard let key = try readKey() else { throw .corrupt("the vault key file is missing") }
        guard sealed.count > Self.magic.count, sealed.prefix(Self.magic.count) == Self.magic else {
            throw .corrupt("unknown vault format")
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.dropFirst(Self.magic.count))
            return try AES.GCM.open(box, using: key, authenticating: Self.associated)
        } catch {
            // On Linux an authentication failure surfaces as CryptoKitError.underlyingCoreCryptoError:
            // every failure here means "cannot be trusted".
            throw .corrupt("the vault failed authentication (\(type(of: error)))")
        }
    }

    /// - Throws: `SecretStoreError` when the key or the vault cannot be written (disk full, read-only).
    public func save(_ data: Data) throws(SecretStoreError) {
        let key: SymmetricKey
        if let existing = try? readKey() { key = existing } else { key = try createKey() }
        let sealed: Data
        do {
            guard let combined = try AES.GCM.seal(data, using: key, authenticating: Self.associated).combined else {
                throw SecretStoreError.io("AES-GCM produced no combined form")
            }
            sealed = Self.magic + combined
        } catch {
            throw .io("could not seal the vault (\(type(of: error)))")
        }
        do {
            try DurableFile.replace(path, with: sealed, mode: S_IRUSR | S_IWUSR)
        } catch {
            throw .io(error.description)
        }
    }

    /// - Throws: `SecretStoreError` when the vault file exists but cannot be removed.
    public func delete() throws(SecretStoreError) {
        if unlink(path) != 0 && errno != ENOENT { throw .io("could not delete the vault: \(String(cString: strerror(errno)))") }
        DurableFile.syncDirectory(of: path)
    }

    // MARK: - Key file

    /// The key, or nil when there is no key file; throws when it exists but is malformed.
    private func readKey() throws(SecretStoreError) -> SymmetricKey? {
        guard FileManager.default.fileExists(atPath: keyPath) else { return nil }
        guard let bytes = FileManager.default.contents(atPath: keyPath) else { throw .io("cannot read the vault key file") }
        guard bytes.count == 32 else { throw .corrupt("the vault key file is malformed") }
        return SymmetricKey(data: bytes)
    }

    /// Creates a fresh 256-bit key file with mode 0600 (replacing a malformed one). When
    /// another process wins the race, its key is used.
    private func createKey() throws(SecretStoreError) -> SymmetricKey {
        if FileManager.default.fileExists(atPath: keyPath) { unlink(keyPath) }  // malformed: its vault is unreadable anyway
        let key = SymmetricKey(size: .bits256)
        let bytes = key.withUnsafeBytes { Data($0) }
        do {
            try DurableFile.create(keyPath, with: bytes, mode: S_IRUSR | S_IWUSR)
        } catch {
            if let existing = try? readKey() { return existing }
            throw .io(error.description)
        }
        return key
    }
}
