import Foundation

/// The token vault (AU-9): the live set is read from and written to the `SecretStore`
/// as one JSON record; a locked vault (an iOS device before first unlock) is told apart
/// from an empty or malformed one.
extension TokenRefresher {
    /// The persisted vault record: the live set, the fingerprint of the seed it grew
    /// from (never the seed itself), and whether the credentials are dead.
    struct VaultRecord: Codable, Sendable {
        var version = 1
        var tokens: TokenSet
        var seedFingerprint: String?
        var dead: Bool
    }

    /// Reads the vault record; nil when empty, unreadable (logged) or locked (`vaultLocked`).
    func loadRecord() -> VaultRecord? {
        do {
            guard let data = try secrets.load() else { return nil }
            return try JSONDecoder().decode(VaultRecord.self, from: data)
        } catch SecretStoreError.unavailable(let why) {
            vaultLocked = true
            logger.warning("auth: the token vault is not readable yet; uploads wait", metadata: ["why": "\(why)"])
            return nil
        } catch {
            logger.error(
                "auth: the token vault could not be read; treating it as empty",
                metadata: ["error": "\(error is DecodingError ? "malformed record" : "\(error)")"])
            return nil
        }
    }

    func persist() {
        if let failure = save(VaultRecord(tokens: tokens, seedFingerprint: seedFingerprint, dead: isDead)) {
            logger.error("auth: could not persist the token set; it is kept in memory", metadata: ["error": "\(failure)"])
        }
    }

    /// Writes `record` to the vault; returns why it failed, or nil.
    func save(_ record: VaultRecord) -> String? {
        do {
            try secrets.save(try JSONEncoder().encode(record))
            return nil
        } catch {
            return error is EncodingError ? "encoding failed" : "\(error)"
        }
    }
}
