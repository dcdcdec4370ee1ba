/// One API whose availability the check enforces, with where that availability is declared.
public struct Symbol: Hashable, Sendable {
    /// The referenced name: a type, protocol, global function or macro (`base == nil`), or a
    /// member (`base` set).
    public let name: String
    /// For a member: the type it is reached through (`Task` in `Task.sleep(for:)`), or `"*"` for
    /// an instance member matched on any receiver (only names no project type shares).
    public let base: String?
    /// For a function member: the first argument label that tells the overload (`for`).
    public let label: String?
    /// An enum case also matched as an implicit member (`case .authorizedWhenInUse:`).
    public let implicitMember: Bool
    /// The module that declares it; outside the standard library a file must import it
    /// (or a framework that re-exports it) for a reference to count.
    public let module: String
    /// Apple's availability of the symbol.
    public let availability: Availability
    /// Where the availability comes from: file (header or interface) and the annotation.
    public let source: String

    /// A table entry.
    public init(
        _ name: String, base: String? = nil, label: String? = nil, implicitMember: Bool = false, module: String,
        _ availability: Availability, source: String
    ) {
        self.name = name
        self.base = base
        self.label = label
        self.implicitMember = implicitMember
        self.module = module
        self.availability = availability
        self.source = source
    }

    /// How a finding names it: `Task.sleep(for:)`, `CLMonitor`.
    public var displayName: String {
        var text = base.map { $0 == "*" ? ".\(name)" : $0 == name ? name : "\($0).\(name)" } ?? name
        if let label { text += "(\(label):)" }
        return text
    }
}

/// The symbols the check knows, each citing the Apple (or Swift toolchain) interface that
/// declares its availability. The standard library's interfaces ship with the Swift toolchain
/// (Swift 6.3.1, `usr/lib/swift_static/linux/<Module>.swiftmodule/x86_64-unknown-linux-gnu.swiftinterface`)
/// and carry Apple's platform availability verbatim; `SymbolTableTests` re-reads those files
/// and fails when an entry no longer matches them. Framework entries cite Apple's
/// iPhoneOS18.0.sdk headers (Xcode 16.0) or swift-foundation's sources, which are the source of
/// Apple's Foundation overlay for these declarations.
public enum SymbolTable {
    static let stdlibInterface = "Swift 6.3.1 toolchain usr/lib/swift_static/linux/"
    static let apple16: Availability = .init(iOS: "16.0", macOS: "13.0")
    static let apple17: Availability = .init(iOS: "17.0", macOS: "14.0")
    static let apple18: Availability = .init(iOS: "18.0", macOS: "15.0")
    static let apple26: Availability = .init(iOS: "26.0", macOS: "26.0")

    /// Every entry.
    public static let all: [Symbol] = stdlib + foundation + coreLocation + backgroundTasks

    /// The standard library, `_Concurrency`, `_StringProcessing`, `Synchronization`, `Observation`.
    public static let stdlib: [Symbol] = [
        Symbol(
            "Duration", module: "Swift", apple16,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) @frozen public struct Duration`"),
        Symbol(
            "DurationProtocol", module: "Swift", apple16,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public protocol DurationProtocol`"),
        Symbol(
            "InstantProtocol", module: "Swift", apple16,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public protocol InstantProtocol`"),
        Symbol(
            "Clock", module: "Swift", apple16,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public protocol Clock`"),
        Symbol(
            "ContinuousClock", module: "Swift", apple16,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public struct ContinuousClock`"),
        Symbol(
            "SuspendingClock", module: "Swift", apple16,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public struct SuspendingClock`"),
        Symbol(
            "sleep", base: "Task", label: "for", module: "Swift", apple16,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public static func sleep<C>(for duration: C.Instant.Duration, …)`"
        ),
        Symbol(
            "sleep", base: "Task", label: "until", module: "Swift", apple16,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public static func sleep<C>(until deadline: C.Instant, …)`"
        ),
        Symbol(
            "Regex", module: "Swift", apple16,
            source: stdlibInterface
                + "_StringProcessing.swiftmodule: `@available(macOS 13.0, iOS 16.0, watchOS 9.0, tvOS 16.0, *) public struct Regex<Output>`"
        ),
        Symbol(
            "withDiscardingTaskGroup", module: "Swift", apple17,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0, *) public func withDiscardingTaskGroup`"
        ),
        Symbol(
            "withThrowingDiscardingTaskGroup", module: "Swift", apple17,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0, *) public func withThrowingDiscardingTaskGroup`"
        ),
        Symbol(
            "TaskExecutor", module: "Swift", apple18,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) public protocol TaskExecutor`"
        ),
        Symbol(
            "withTaskExecutorPreference", module: "Swift", apple18,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) public func withTaskExecutorPreference`"
        ),
        Symbol(
            "immediate", base: "Task", module: "Swift", apple26,
            source: stdlibInterface
                + "_Concurrency.swiftmodule: `@available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) public static func immediate`"
        ),
        Symbol(
            "RangeSet", module: "Swift", apple18,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) public struct RangeSet`"),
        Symbol(
            "InlineArray", module: "Swift", apple26,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) public struct InlineArray`"
        ),
        Symbol(
            "UTF8Span", module: "Swift", apple26,
            source: stdlibInterface
                + "Swift.swiftmodule: `@available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *) public struct UTF8Span`"),
        Symbol(
            "Mutex", module: "Synchronization", apple18,
            source: stdlibInterface
                + "Synchronization.swiftmodule: `@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) public struct Mutex<Value>`"
        ),
        Symbol(
            "Atomic", module: "Synchronization", apple18,
            source: stdlibInterface
                + "Synchronization.swiftmodule: `@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) public struct Atomic<Value>`"
        ),
        Symbol(
            "Observable", module: "Observation", apple17,
            source: "Swift 6.3.1 toolchain usr/lib/swift/linux/Observation.swiftmodule: "
                + "`@available(macOS 14.0, iOS 17.0, watchOS 10.0, tvOS 17.0, *) … public macro Observable()` (and `protocol Observable`)"),
    ]

    /// Foundation (the Swift overlay; on Linux swift-corelibs/swift-foundation declare these
    /// without any availability, which is why Linux CI never saw them).
    public static let foundation: [Symbol] = [
        Symbol(
            "URL", base: "URL", label: "filePath", module: "Foundation", apple16,
            source: "swiftlang/swift-foundation Sources/FoundationEssentials/URL/URL.swift: "
                + "`@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) public init(filePath path: String, …)`; "
                + "iPhoneOS18.0.sdk Foundation.swiftinterface: `@available(macOS 13.0, iOS 16.0, …) public init?(filePath path: System.FilePath, …)`"
        ),
        Symbol(
            "appending", base: "*", label: "path", module: "Foundation", apple16,
            source: "swiftlang/swift-foundation Sources/FoundationEssentials/URL/URL.swift: "
                + "`@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *) public func appending<S: StringProtocol>(path: S, …)`"),
        Symbol(
            "Predicate", module: "Foundation", apple17,
            source: "swiftlang/swift-foundation Sources/FoundationEssentials/Predicate/Predicate.swift: "
                + "`@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) public struct Predicate<each Input>` (and `#Predicate`)"),
        Symbol(
            "RecurrenceRule", base: "Calendar", module: "Foundation", apple18,
            source: "swiftlang/swift-foundation Sources/FoundationEssentials/Calendar: `extension Calendar { "
                + "@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) public struct RecurrenceRule`"),
        Symbol(
            "TermOfAddress", module: "Foundation", apple17,
            source: "iPhoneOS18.0.sdk Foundation.swiftmodule/arm64-apple-ios.swiftinterface: "
                + "`@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) public struct TermOfAddress`"),
    ]

    /// CoreLocation (iPhoneOS18.0.sdk headers; the Swift refinements keep the header's availability).
    public static let coreLocation: [Symbol] = [
        Symbol(
            "CLMonitor", module: "CoreLocation", apple17,
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLMonitor.h: "
                + "`API_AVAILABLE(macos(14.0), ios(17.0)) API_UNAVAILABLE(watchos, tvos)` on `@interface CLMonitor`"),
        Symbol(
            "CLLocationUpdate", module: "CoreLocation", apple17,
            source: "iPhoneOS18.0.sdk CoreLocation Swift overlay (CLUpdate / CLLocationUpdater.h): iOS 17.0, macOS 14.0, "
                + "as Apple's documentation of CLUpdate states (`iOS 17.0+ … macOS 14.0+`); Shims/AppleSDK/CoreLocation/CLLocationUpdate.swift"
        ),
        Symbol(
            "CLBackgroundActivitySession", module: "CoreLocation", .init(iOS: "17.0", unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLBackgroundActivitySession.h: "
                + "`API_AVAILABLE(ios(17.0), watchos(10.0)) API_UNAVAILABLE(macos)` on `@interface CLBackgroundActivitySession`"),
        Symbol(
            "CLServiceSession", module: "CoreLocation", .init(iOS: "18.0", unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLServiceSession.h: "
                + "`API_AVAILABLE(ios(18.0), watchos(11.0), tvos(18.0)) API_UNAVAILABLE(macos)` on `@interface CLServiceSession`"),
        Symbol(
            "authorizedWhenInUse", base: "CLAuthorizationStatus", implicitMember: true, module: "CoreLocation",
            .init(iOS: "8.0", unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLLocationManager.h: "
                + "`kCLAuthorizationStatusAuthorizedWhenInUse API_AVAILABLE(ios(8.0)) API_UNAVAILABLE(macos)`"),
        Symbol(
            "showsBackgroundLocationIndicator", base: "*", module: "CoreLocation", .init(iOS: "11.0", unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk CoreLocation.framework/Headers/CLLocationManager.h: "
                + "`showsBackgroundLocationIndicator API_AVAILABLE(ios(11.0)) API_UNAVAILABLE(macos) API_UNAVAILABLE(watchos, tvos)`"),
    ]

    /// BackgroundTasks.
    public static let backgroundTasks: [Symbol] = [
        Symbol(
            "BGTaskScheduler", module: "BackgroundTasks", .init(iOS: "13.0", unavailable: [.macOS]),
            source: "iPhoneOS18.0.sdk BackgroundTasks.framework/Headers/BGTaskScheduler.h: "
                + "`BG_EXTERN API_AVAILABLE(ios(13.0), tvos(13.0)) API_UNAVAILABLE(macos) API_UNAVAILABLE(watchos)`")
    ]
}
