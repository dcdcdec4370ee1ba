import Foundation

/// The Keychain account naming the token vault's item (AU-9). It used to be the database's
/// absolute path, which on iOS contains the app container's UUID: the container path can
/// change when the app is updated or restored, and the item was then orphaned (the device
/// had to enrol again). The account is now the database path relative to the home
/// directory (`Library/Application Support/Beekon/beekon.sqlite`), stable across container
/// moves; an item under an old absolute-path account that ends with the same relative path
/// is moved to the new account on first read.
package enum KeychainAccount {
    /// The stable account for the database at `databasePath` under `home` (the app's
    /// container on iOS, `NSHomeDirectory()`); the path itself when it is outside `home`.
    package static func stable(databasePath: String, home: String) -> String {
        let prefix = home.hasSuffix("/") ? home : home + "/"
        guard databasePath.hasPrefix(prefix) else { return databasePath }
        return String(databasePath.dropFirst(prefix.count))
    }

    /// Among the accounts the service holds, the legacy one to migrate into `stable`: an
    /// absolute path ending in `/` + `stable` (the same database in an older container);
    /// the lexically last when several match, nil when none does or `stable` is itself absolute.
    package static func legacy(among accounts: [String], stable: String) -> String? {
        guard !stable.hasPrefix("/") else { return nil }
        return accounts.filter { $0.hasPrefix("/") && $0.hasSuffix("/" + stable) }.max()
    }

    /// Reads the item under `stable`; when there is none, moves the item of the legacy account
    /// (``legacy(among:stable:)``) to `stable` — written under the new account first, then the
    /// old one deleted, so a failure in between leaves a copy, never none. Each closure is one
    /// Keychain call; a refusal (e.g. `.unavailable` before the first unlock) is thrown as is.
    package static func load(
        stable: String, read: (String) throws(SecretStoreError) -> Data?, accounts: () throws(SecretStoreError) -> [String],
        write: (Data) throws(SecretStoreError) -> Void, delete: (String) throws(SecretStoreError) -> Void
    ) throws(SecretStoreError) -> Data? {
        if let data = try read(stable) { return data }
        guard let old = legacy(among: try accounts(), stable: stable), let data = try read(old) else { return nil }
        try write(data)
        try delete(old)
        return data
    }
}
