// Linux-only shim of the few UIKit declarations Beekon's Apple glue uses (background
// tasks, application state and lifecycle notification names), following iPhoneOS18.0.sdk (Xcode 16.0) UIApplication.h and its Swift
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
    @available(iOS 4.0, *)
    open var applicationState: UIApplication.State { fatalError("UIKit shim") }

    @available(iOS 4.0, *)
    public enum State: Int, @unchecked Sendable {
        case active = 0
        case inactive = 1
        case background = 2
    }

    // `class let` in Apple's Swift interface (imported Objective-C constants); a Swift class
    // cannot declare a stored `class let`, so `static let`, used the same way.
    @available(iOS 2.0, *)
    public static let didBecomeActiveNotification = NSNotification.Name("UIApplicationDidBecomeActiveNotification")
    @available(iOS 4.0, *)
    public static let didEnterBackgroundNotification = NSNotification.Name("UIApplicationDidEnterBackgroundNotification")
    @available(iOS 4.0, *)
    public static let willEnterForegroundNotification = NSNotification.Name("UIApplicationWillEnterForegroundNotification")
}
