import Beekon
import Foundation

/// A `SecretStore` in memory: share one instance between two `Beekon` instances to
/// model a process restart; `corrupt()` makes the next loads fail like a tampered vault.
public final class InMemorySecretStore: SecretStore, @unchecked Sendable {
    private let lock = NSLock()
    private var blob: Data?
    private var failing = false
    private var saves = 0

    /// Creates an empty store.
    public init() {}

    /// The stored blob (plaintext: this store does not encrypt).
    public var contents: Data? { lock.withLock { blob } }

    /// How many times `save` was called.
    public var saveCount: Int { lock.withLock { saves } }

    /// Makes `load` throw `.corrupt` until the next `save`.
    public func corrupt() { lock.withLock { failing = true } }

    public func load() throws(SecretStoreError) -> Data? {
        let (data, fail): (Data?, Bool) = lock.withLock { (blob, failing) }
        if fail { throw .corrupt("simulated corruption") }
        return data
    }

    public func save(_ data: Data) throws(SecretStoreError) {
        lock.withLock { blob = data; failing = false; saves += 1 }
    }

    public func delete() throws(SecretStoreError) {
        lock.withLock { blob = nil; failing = false }
    }
}
