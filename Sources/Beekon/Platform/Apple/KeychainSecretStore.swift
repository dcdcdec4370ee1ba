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

        /// The item for the database at `databasePath`.
        public init(databasePath: String) {
            self.init(account: databasePath)
        }

        private var query: [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
        }

        /// - Throws: `SecretStoreError` when the Keychain refuses the read (e.g. the device is locked).
        public func load() throws(SecretStoreError) -> Data? {
            var q = query
            q[kSecReturnData as String] = true
            q[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = KeychainStatus(SecItemCopyMatching(q as CFDictionary, &result))
            if let error = status.error("read") { throw error }
            guard status == .success else { return nil }
            guard let data = result as? Data else { throw .corrupt("keychain item holds no data") }
            return data
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
