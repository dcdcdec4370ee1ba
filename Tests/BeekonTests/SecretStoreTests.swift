@testable import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

@Suite("Token vault (AU-9)")
struct SecretStoreTests {
    @Test func fileVaultRoundTripsEncryptedWithA0600KeyFile() throws {
        let dir = TempDir()
        let store = FileSecretStore(databasePath: dir.db)
        #expect(try store.load() == nil)
        let secret = Data(#"{"accessToken":"plain-secret-TOKEN-123"}"#.utf8)
        try store.save(secret)
        #expect(try store.load() == secret)
        let sealed = try #require(FileManager.default.contents(atPath: dir.db + ".tokens"))
        #expect(sealed.range(of: Data("plain-secret-TOKEN-123".utf8)) == nil, "not plaintext")
        #expect(sealed.range(of: Data("accessToken".utf8)) == nil)
        for path in [dir.db + ".tokens.key", dir.db + ".tokens"] {
            let mode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
            #expect(mode.intValue & 0o777 == 0o600, "\(path) mode \(String(mode.intValue, radix: 8))")
        }
        #expect(try #require(FileManager.default.contents(atPath: dir.db + ".tokens.key")).count == 32)
        // A second save replaces atomically and leaves no temp files.
        try store.save(Data("v2".utf8))
        #expect(try store.load() == Data("v2".utf8))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty)
        try store.delete()
        #expect(try store.load() == nil)
        try store.delete()
    }

    @Test func tamperedVaultFailsCleanly() throws {
        let dir = TempDir()
        let store = FileSecretStore(databasePath: dir.db)
        try store.save(Data("secret".utf8))
        var sealed = try #require(FileManager.default.contents(atPath: store.path))
        sealed[sealed.count - 5] ^= 0x01
        try sealed.write(to: URL(fileURLWithPath: store.path))
        #expect(throws: SecretStoreError.self) { try store.load() }
        try Data("BKV1".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: SecretStoreError.self) { try store.load() }
        try Data().write(to: URL(fileURLWithPath: store.path))
        #expect(throws: SecretStoreError.self) { try store.load() }
        // A different key: fails authentication too; a save then works again.
        try store.save(Data("secret".utf8))
        try FileSecretStore(path: dir.path + "/other", keyPath: dir.path + "/other.key").save(Data("x".utf8))
        try FileManager.default.removeItem(atPath: store.keyPath)
        try FileManager.default.copyItem(atPath: dir.path + "/other.key", toPath: store.keyPath)
        #expect(throws: SecretStoreError.self) { try store.load() }
        try Data("short".utf8).write(to: URL(fileURLWithPath: store.keyPath))
        #expect(throws: SecretStoreError.self) { try store.load() }
        try store.save(Data("fresh".utf8))
        #expect(try store.load() == Data("fresh".utf8))
    }

    @Test func tamperedVaultInTheSDKMeansSeedOrNothingNeverACrash() async throws {
        let h = Harness()
        let t = RoutingTransport()
        let logs = LogCapture()
        let first = h.beekon(transport: t, secrets: nil, logs: logs)
        try await configureSync(first, syncConfig(auth: authRecipe()))
        await first.shutdown()
        let vault = h.dir.db + ".tokens"
        var sealed = try #require(FileManager.default.contents(atPath: vault))
        sealed[sealed.count / 2] ^= 0xFF
        try sealed.write(to: URL(fileURLWithPath: vault))
        let second = h.beekon(transport: t, secrets: nil, logs: logs)
        try await configureSync(second, syncConfig(auth: authRecipe()))
        try await second.start()
        await h.provider.send(fix(1))
        try await second.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer seed-access-AAAA", "unreadable vault: the seed")
        #expect(logs.text.contains("could not be read"))
    }

    /// Process death: a new `Beekon` over the same database and vault uses the rotated
    /// tokens, not the seed the app passes again; no token is anywhere in plaintext.
    @Test func rotatedTokensSurviveARestartAndAreNowhereInPlaintext() async throws {
        let h = Harness()
        let t = RoutingTransport()
        let logs = LogCapture()
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(
            tokenAnswer(#"{"access_token":"rotated-ACCESS-777","refresh_token":"rotated-REFRESH-888","expires_in":7200}"#))
        let first = h.beekon(transport: t, secrets: nil, logs: logs)  // nil: the file vault next to the database
        try await configureSync(first, syncConfig(auth: authRecipe()))
        try await first.start()
        await h.provider.send(fix(1))
        try await first.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer rotated-ACCESS-777")
        await first.shutdown()

        // "Restart": a new instance, resumed from the persisted configuration (no seed in it) …
        let second = h.beekon(transport: t, secrets: nil, logs: logs)
        #expect(try await second.resumeIfNeeded())
        await h.provider.send(fix(2, north: 10))
        try await second.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer rotated-ACCESS-777")
        // … then the app configures with its original seed again: not re-adopted.
        try await configureSync(second, syncConfig(auth: authRecipe()))
        await h.provider.send(fix(3, north: 20))
        try await second.sync()
        #expect(await t.ingest.requests.last?.headers["Authorization"] == "Bearer rotated-ACCESS-777")
        // The next refresh sends the rotated refresh token.
        await t.ingest.enqueue(statuses: 401)
        await t.token.enqueue(tokenAnswer(#"{"access_token":"third-ACCESS-999"}"#))
        await h.provider.send(fix(4, north: 30))
        try await second.sync()
        #expect(await t.token.requests.last?.text.contains("refresh_token=rotated-REFRESH-888") == true)
        await second.shutdown()

        // Every file the SDK wrote, and its logs: no token in plaintext.
        let secrets = ["seed-access-AAAA", "seed-refresh-RRRR", "rotated-ACCESS-777", "rotated-REFRESH-888", "third-ACCESS-999"]
        let files = try FileManager.default.contentsOfDirectory(atPath: h.dir.path)
        #expect(files.contains("beekon.sqlite.tokens") && files.contains("beekon.sqlite.tokens.key"))
        for file in files {
            let data = try #require(FileManager.default.contents(atPath: h.dir.path + "/" + file))
            for secret in secrets {
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) found in \(file)")
            }
        }
        for secret in secrets { #expect(!logs.text.contains(secret), "\(secret) found in the logs") }
        let report = try await Beekon.inspect(databaseAt: h.dir.db)
        for secret in secrets { #expect(!"\(report)".contains(secret)) }
    }
}
