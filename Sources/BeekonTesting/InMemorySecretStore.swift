import Beekon
import Foundation

/// A `SecretStore` in memory: share one instance between two `Beekon` instances to
/// model a process restart; `corrupt()` makes the next loads fail like a tampered vault.
public final class InMemorySecretStore: SecretStore, @unchecked Sendable {
    private let lock = NSLock()
    private var blob: Data?
    private var failing = false
    private var refusingSaves = false
    private var saves = 0

    /// Creates an empty store.
    public init() {}

    /// The stored blob (plaintext: this store does not encrypt).
    public var contents: Data? { lock.withLock { blob } }

    /// How many times `save` was called.
    public var saveCount: Int { lock.withLock { saves } }

    /// Makes `load` throw `.corrupt` until the next `save`.
    public func corrupt() { lock.withLock { failing = true } }

    /// While `refuse` is true, `save` throws `.io` and keeps the old contents (a full disk).
    public func refuseSaves(_ refuse: Bool) { lock.withLock { refusingSaves = refuse } }

    /// - Throws: The failure scripted for loads, if any.
    public func load() throws(SecretStoreError) -> Data? {
        let (data, fail): (Data?, Bool) = lock.withLock { (blob, failing) }
        if fail { throw .corrupt("simulated corruption") }
        return data
    }

    /// - Throws: The failure scripted for saves, if any.
    public func save(_ data: Data) throws(SecretStoreError) {
        let refused: Bool = lock.withLock {
            saves += 1
            guard !refusingSaves else { return true }
            blob = data
            failing = false
            return false
        }
        if refused { throw .io("no space left on device (simulated)") }
    }

    /// - Throws: The failure scripted for deletions, if any.
    public func delete() throws(SecretStoreError) {
        lock.withLock {
            blob = nil
            failing = false
        }
    }
}
