#if (canImport(Security) && !os(Linux)) || BEEKON_APPLE_SHIM
    import Foundation
    import Security
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The Apple-platform vault (AU-9): one generic-password Keychain item, readable after
    /// the first unlock (so background refresh works), never synced or migrated off the device.
    /// Before the first unlock after a boot the item cannot be read or written: that throws
    /// `SecretStoreError.unavailable`, and the SDK defers instead of treating the vault as empty.
    public struct KeychainSecretStore: SecretStore {
        /// Keychain service name.
        public let service: String
        /// Keychain account (one item per database).
        public let account: String

        /// An item identified by `service` and `account`.
        public init(service: String = "dev.beekon.auth", account: String) {
            self.service = service
            self.account = account
        }

        /// The item for the database at `databasePath`, under the stable account
        /// ``KeychainAccount/stable(databasePath:home:)`` (the path relative to the app's home
        /// directory, which survives container moves on update or restore).
        public init(databasePath: String) {
            self.init(account: KeychainAccount.stable(databasePath: databasePath, home: NSHomeDirectory()))
        }

        private var query: [String: Any] { Self.query(service: service, account: account) }

        private static func query(service: String, account: String?) -> [String: Any] {
            var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            if let account { q[kSecAttrAccount as String] = account }
            return q
        }

        /// Reads the item; when there is none, migrates an item stored under the old
        /// absolute-path account (``KeychainAccount/legacy(among:stable:)``) to this account.
        /// - Throws: `SecretStoreError` when the Keychain refuses the read (e.g. the device is locked).
        public func load() throws(SecretStoreError) -> Data? {
            try KeychainAccount.load(
                stable: account, read: read(account:), accounts: accounts, write: save,
                delete: { (old: String) throws(SecretStoreError) in
                    let status = KeychainStatus(SecItemDelete(Self.query(service: service, account: old) as CFDictionary))
                    if let error = status.error("delete") { throw error }
                })
        }

        private func read(account: String) throws(SecretStoreError) -> Data? {
            guard let result = try copyMatching(account: account, returning: kSecReturnData, limit: kSecMatchLimitOne) else {
                return nil
            }
            guard let data = result as? Data else { throw .corrupt("keychain item holds no data") }
            return data
        }

        /// Every account this service holds items under.
        private func accounts() throws(SecretStoreError) -> [String] {
            let result = try copyMatching(account: nil, returning: kSecReturnAttributes, limit: kSecMatchLimitAll)
            let items = result as? [[String: Any]] ?? []
            return items.compactMap { $0[kSecAttrAccount as String] as? String }
        }

        /// `SecItemCopyMatching` for this service (and `account`, when given): nil when nothing matches.
        private func copyMatching(account: String?, returning key: CFString, limit: CFString) throws(SecretStoreError) -> CFTypeRef? {
            var q = Self.query(service: service, account: account)
            q[key as String] = true
            q[kSecMatchLimit as String] = limit
            var result: CFTypeRef?
            let status = KeychainStatus(SecItemCopyMatching(q as CFDictionary, &result))
            if let error = status.error("read") { throw error }
            return status == .success ? result : nil
        }

        /// - Throws: `SecretStoreError` when the Keychain refuses the write.
        public func save(_ data: Data) throws(SecretStoreError) {
            let attributes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
            if status == errSecItemNotFound {
                var add = query
                for (k, v) in attributes { add[k] = v }
                status = SecItemAdd(add as CFDictionary, nil)
            }
            if let error = KeychainStatus(status).error("write") { throw error }
        }

        /// - Throws: `SecretStoreError` when the Keychain refuses the deletion.
        public func delete() throws(SecretStoreError) {
            if let error = KeychainStatus(SecItemDelete(query as CFDictionary)).error("delete") { throw error }
        }
    }
#endif
