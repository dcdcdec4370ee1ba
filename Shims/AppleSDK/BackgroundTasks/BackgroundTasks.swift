// Linux-only shim of the BackgroundTasks declarations Beekon's Apple glue uses,
// following iPhoneOS18.0.sdk (Xcode 16.0) BGTaskScheduler.h / BGTaskRequest.h / BGTask.h
// and their Swift refinements. NEVER built on Apple platforms.
import Foundation

@available(iOS 13.0, tvOS 13.0, *) @available(macOS, unavailable) @available(watchOS, unavailable)
open class BGTaskRequest: NSObject, @unchecked Sendable {
    open var identifier: String { fatalError("BackgroundTasks shim") }
    open var earliestBeginDate: Date? {
        get { fatalError("BackgroundTasks shim") }
        set { fatalError("BackgroundTasks shim") }
    }
}

@available(iOS 13.0, tvOS 13.0, *) @available(macOS, unavailable) @available(watchOS, unavailable)
open class BGAppRefreshTaskRequest: BGTaskRequest, @unchecked Sendable {
    public init(identifier: String) { fatalError("BackgroundTasks shim") }
}

@available(iOS 13.0, tvOS 13.0, *) @available(macOS, unavailable) @available(watchOS, unavailable)
open class BGTask: NSObject {
    open var identifier: String { fatalError("BackgroundTasks shim") }
    open var expirationHandler: (@Sendable () -> Void)? {
        get { fatalError("BackgroundTasks shim") }
        set { fatalError("BackgroundTasks shim") }
    }
    open func setTaskCompleted(success: Bool) { fatalError("BackgroundTasks shim") }
}

@available(iOS 13.0, tvOS 13.0, *) @available(macOS, unavailable) @available(watchOS, unavailable)
open class BGTaskScheduler: NSObject, @unchecked Sendable {
    public class var shared: BGTaskScheduler { fatalError("BackgroundTasks shim") }
    open func register(
        forTaskWithIdentifier identifier: String, using queue: DispatchQueue?, launchHandler: @escaping @Sendable (BGTask) -> Void
    ) -> Bool { fatalError("BackgroundTasks shim") }
    open func submit(_ taskRequest: BGTaskRequest) throws { fatalError("BackgroundTasks shim") }
}
