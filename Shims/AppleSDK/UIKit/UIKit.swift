// Linux-only shim of the few UIKit declarations Beekon's Apple glue uses (background
// tasks), following iPhoneOS18.0.sdk (Xcode 16.0) UIApplication.h and its Swift
// refinements. NEVER built on Apple platforms (Package.swift declares it only on Linux).
import Foundation

@available(iOS 2.0, *)
public struct UIBackgroundTaskIdentifier: RawRepresentable, Hashable, Sendable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

@available(iOS 2.0, *)
@MainActor
open class UIApplication: NSObject {
    public class var shared: UIApplication { fatalError("UIKit shim") }
    @available(iOS 7.0, *)
    open func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil)
        -> UIBackgroundTaskIdentifier
    { fatalError("UIKit shim") }
    @available(iOS 4.0, *)
    open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) { fatalError("UIKit shim") }
    @available(iOS 4.0, *)
    open var backgroundTimeRemaining: TimeInterval { fatalError("UIKit shim") }
}
