// Linux-only shim of the few CoreMotion declarations Beekon's Apple glue uses (motion
// activity), following iPhoneOS18.0.sdk (Xcode 16.0) CMMotionActivityManager.h,
// CMMotionActivity.h, CMLogItem.h and CMAuthorization.h. NEVER built on Apple platforms
// (Package.swift declares it only on Linux). Bodies trap.
import Foundation

@available(iOS 11.0, watchOS 4.0, *)
public enum CMAuthorizationStatus: Int, @unchecked Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    case authorized = 3
}

@available(iOS 7.0, *)
public enum CMMotionActivityConfidence: Int, @unchecked Sendable {
    case low = 0
    case medium = 1
    case high = 2
}

@available(iOS 4.0, *)
open class CMLogItem: NSObject, @unchecked Sendable {
    open var timestamp: TimeInterval { fatalError("CoreMotion shim") }
}

@available(iOS 7.0, *)
open class CMMotionActivity: CMLogItem, @unchecked Sendable {
    open var confidence: CMMotionActivityConfidence { fatalError("CoreMotion shim") }
    open var startDate: Date { fatalError("CoreMotion shim") }
    open var unknown: Bool { fatalError("CoreMotion shim") }
    open var stationary: Bool { fatalError("CoreMotion shim") }
    open var walking: Bool { fatalError("CoreMotion shim") }
    open var running: Bool { fatalError("CoreMotion shim") }
    open var automotive: Bool { fatalError("CoreMotion shim") }
    @available(iOS 8.0, *)
    open var cycling: Bool { fatalError("CoreMotion shim") }
}

@available(iOS 7.0, *) @available(macOS, unavailable)
public typealias CMMotionActivityHandler = (CMMotionActivity?) -> Void

@available(iOS 7.0, *)
open class CMMotionActivityManager: NSObject {
    override public init() { fatalError("CoreMotion shim") }
    open class func isActivityAvailable() -> Bool { fatalError("CoreMotion shim") }
    @available(iOS 11.0, watchOS 4.0, *)
    open class func authorizationStatus() -> CMAuthorizationStatus { fatalError("CoreMotion shim") }
    @available(iOS 7.0, *) @available(macOS, unavailable)
    open func startActivityUpdates(to queue: OperationQueue, withHandler handler: @escaping CMMotionActivityHandler) {
        fatalError("CoreMotion shim")
    }
    @available(iOS 7.0, *) @available(macOS, unavailable)
    open func stopActivityUpdates() { fatalError("CoreMotion shim") }
}
