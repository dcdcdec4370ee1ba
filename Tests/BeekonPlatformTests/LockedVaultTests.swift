@testable import Beekon
import BeekonTesting
import Foundation
import Logging
import Testing

/// The Keychain vault on a device not unlocked since boot (AU-9, BY-10): a locked read
/// defers uploads and never overwrites the stored (rotated) tokens with the seed.
@Suite("Locked token vault")
struct LockedVaultTests {
    @Test func keychainStatusesMapToDeferOrFail() {
        #expect(KeychainStatus(0) == .success)
        #expect(KeychainStatus(-25300) == .notFound)
        #expect(KeychainStatus(-25308) == .locked)
        #expect(KeychainStatus(-34018) == .failed(-34018))
        #expect(KeychainStatus(-25300).error("read") == nil)
        guard case .unavailable = KeychainStatus(-25308).error("read") else {
            Issue.record("a locked keychain must be `unavailable`, not an I/O failure")
            return
        }
    }

    @Test func aLockedVaultDefersAndKeepsTheRotatedTokens() async throws {
        let seed = AuthConfig(
            accessToken: "seed-access", refreshToken: "seed-refresh",
            refreshUrl: URL(string: "http://127.0.0.1:9/token")!)
        let rotated = TokenRefresher.VaultRecord(
            tokens: TokenSet(accessToken: "rotated-access", refreshToken: "rotated-refresh", expiresAt: nil),
            seedFingerprint: RefreshExchange.seedFingerprint(seed), dead: false)
        let stored = try JSONEncoder().encode(rotated)
        let vault = LockableStore(stored)
        let clock = TestClock()
        let refresher = TokenRefresher(
            config: seed, transport: ForbiddenTransport { _ in Issue.record("no refresh expected") }, clock: clock,
            secrets: vault, changes: Broadcast<AuthChange>(), logger: Logger(label: "test"))
        await refresher.start()
        #expect(await refresher.authorization() == .wait(until: clock.now().addingTimeInterval(60)))
        #expect(vault.contents == stored)  // nothing adopted, nothing written

        vault.unlock()
        #expect(await refresher.authorization() == .proceed(authorization: "Bearer rotated-access"))
        #expect(vault.contents == stored)
    }
}

/// A vault that answers `unavailable` until unlocked (a Keychain before first unlock).
final class LockableStore: SecretStore, @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    private var locked = true

    init(_ data: Data?) { self.data = data }
    func unlock() { lock.withLock { locked = false } }
    var contents: Data? { lock.withLock { data } }

    func load() throws(SecretStoreError) -> Data? {
        let (isLocked, value) = lock.withLock { (locked, data) }
        if isLocked { throw .unavailable("locked") }
        return value
    }

    func save(_ new: Data) throws(SecretStoreError) {
        let isLocked = lock.withLock { locked }
        if isLocked { throw .unavailable("locked") }
        lock.withLock { data = new }
    }

    func delete() throws(SecretStoreError) {
        let isLocked = lock.withLock { locked }
        if isLocked { throw .unavailable("locked") }
        lock.withLock { data = nil }
    }
}
