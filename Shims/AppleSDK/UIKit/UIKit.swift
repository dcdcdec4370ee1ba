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

    // UIApplication.h: `@property(nonatomic,readonly,getter=isProtectedDataAvailable) BOOL
    // protectedDataAvailable API_AVAILABLE(ios(4.0)) NS_SWIFT_NONISOLATED;`
    @available(iOS 4.0, *)
    nonisolated open var isProtectedDataAvailable: Bool { fatalError("UIKit shim") }

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
    @available(iOS 4.0, *)
    public static let protectedDataDidBecomeAvailableNotification = NSNotification.Name(
        "UIApplicationProtectedDataDidBecomeAvailable")
}

// UIDevice.h (iPhoneOS18.6.sdk): `NS_SWIFT_UI_ACTOR @interface UIDevice`; `batteryLevel`
// "0 .. 1.0. -1.0 if UIDeviceBatteryStateUnknown"; `batteryState` "UIDeviceBatteryStateUnknown
// if monitoring disabled"; `batteryMonitoringEnabled` "default is NO".
@available(iOS 2.0, *)
@MainActor
open class UIDevice: NSObject {
    open class var current: UIDevice { fatalError("UIKit shim") }
    @available(iOS 3.0, *)
    open var isBatteryMonitoringEnabled: Bool {
        get { fatalError("UIKit shim") }
        set { fatalError("UIKit shim") }
    }
    @available(iOS 3.0, *)
    open var batteryState: UIDevice.BatteryState { fatalError("UIKit shim") }
    @available(iOS 3.0, *)
    open var batteryLevel: Float { fatalError("UIKit shim") }

    @available(iOS 3.0, *)
    public enum BatteryState: Int, @unchecked Sendable {
        case unknown = 0
        case unplugged = 1
        case charging = 2
        case full = 3
    }
}

// NSProcessInfo.h (Foundation, iPhoneOS18.6.sdk): `@property (readonly, getter=isLowPowerModeEnabled)
// BOOL lowPowerModeEnabled API_AVAILABLE(macos(12.0), ios(9.0), ...)`. swift-corelibs-foundation
// lacks it, so the shim declares it here (Apple's Foundation has it; this module never exists there).
extension ProcessInfo {
    @available(iOS 9.0, macOS 12.0, *)
    public var isLowPowerModeEnabled: Bool { fatalError("Foundation shim") }
}
