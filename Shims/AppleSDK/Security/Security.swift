// Linux-only shim of the Keychain API Beekon's KeychainSecretStore uses, following
// iPhoneOS18.0.sdk (Xcode 16.0) Security.framework SecItem.h / SecBase.h as Swift imports
// them. NEVER built on Apple platforms (Package.swift declares it only on Linux).
//
// Deviation forced by Linux (no CoreFoundation bridging of its own): the CF types are
// aliases of the Foundation classes they bridge to (CFDictionary ↔ NSDictionary,
// CFString ↔ NSString, CFTypeRef ↔ AnyObject), so `[String: Any] as CFDictionary` and
// `kSecClass as String` type-check as they do on Apple platforms (NSString is not Sendable
// here, so the constants are nonisolated(unsafe) lets; CF strings are immutable). Bodies trap.
import Foundation

public typealias CFDictionary = NSDictionary
public typealias CFString = NSString
public typealias CFTypeRef = AnyObject
public typealias OSStatus = Int32

// SecBase.h
@available(iOS 2.0, *) public var errSecSuccess: OSStatus { 0 }
@available(iOS 2.0, *) public var errSecItemNotFound: OSStatus { -25300 }
@available(iOS 2.0, *) public var errSecInteractionNotAllowed: OSStatus { -25308 }

// SecItem.h: item class, attribute, search, return and value keys.
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecClass: CFString = "class"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
@available(iOS 4.0, *) nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
@available(iOS 4.0, *) nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"

// SecItem.h: listing items (the vault's account migration reads every account of its service).
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
@available(iOS 2.0, *) nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"

// SecItem.h: the four item functions.
@available(iOS 2.0, *)
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("Security shim")
}
@available(iOS 2.0, *)
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    fatalError("Security shim")
}
@available(iOS 2.0, *)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    fatalError("Security shim")
}
@available(iOS 2.0, *)
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    fatalError("Security shim")
}
