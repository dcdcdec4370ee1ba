// Linux-only shim (see CoreLocation.swift): the Swift-only CoreLocation API of iOS 17/18.
import Foundation

@available(iOS 17.0, macOS 14.0, watchOS 10.0, tvOS 17.0, *)
public struct CLLocationUpdate: Sendable {
    public enum LiveConfiguration: Sendable {
        case `default`
        case automotiveNavigation
        case otherNavigation
        case fitness
        case airborne
    }

    public struct Updates: AsyncSequence, Sendable {
        public typealias Element = CLLocationUpdate
        public struct Iterator: AsyncIteratorProtocol {
            public mutating func next() async throws -> CLLocationUpdate? { _shim() }
        }
        public func makeAsyncIterator() -> Iterator { _shim() }
    }

    public var location: CLLocation? { _shim() }
    @available(iOS, introduced: 17.0, deprecated: 18.0) @available(macOS, introduced: 14.0, deprecated: 15.0)
    public var isStationary: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var stationary: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var authorizationDenied: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var authorizationDeniedGlobally: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var authorizationRequestInProgress: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var authorizationRestricted: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var insufficientlyInUse: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var locationUnavailable: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var accuracyLimited: Bool { _shim() }
    @available(iOS 18.0, macOS 15.0, watchOS 11.0, tvOS 18.0, *)
    public var serviceSessionRequired: Bool { _shim() }

    public static func liveUpdates(_ configuration: CLLocationUpdate.LiveConfiguration = .default) -> CLLocationUpdate.Updates { _shim() }
}

// CLBackgroundActivitySession.h (iPhoneOS18.0.sdk): `API_AVAILABLE(ios(17.0), watchos(10.0))
// API_UNAVAILABLE(macos)` on the class, `invalidate` and `backgroundActivitySession` (tvOS not named).
@available(iOS 17.0, watchOS 10.0, *) @available(macOS, unavailable)
open class CLBackgroundActivitySession: NSObject, @unchecked Sendable {
    override public init() { _shim() as Void }
    open func invalidate() { _shim() as Void }
}

// CLServiceSession.h (iPhoneOS18.0.sdk): `API_AVAILABLE(ios(18.0), watchos(11.0), tvos(18.0))
// API_UNAVAILABLE(macos)`; `…RequirementAlways` only `#if TARGET_OS_IOS || TARGET_OS_WATCH`.
@available(iOS 18.0, watchOS 11.0, tvOS 18.0, *) @available(macOS, unavailable)
open class CLServiceSession: NSObject, @unchecked Sendable {
    public enum AuthorizationRequirement: Int, Sendable {
        case none = 0
        case whenInUse = 1
        @available(tvOS, unavailable)
        case always = 2
    }
    public init(authorization: CLServiceSession.AuthorizationRequirement) { _shim() as Void }
    public init(authorization: CLServiceSession.AuthorizationRequirement, fullAccuracyPurposeKey: String) { _shim() as Void }
    open func invalidate() { _shim() as Void }
}

// CLMonitor.h (iPhoneOS18.0.sdk): `API_AVAILABLE(macos(14.0), ios(17.0)) API_UNAVAILABLE(watchos, tvos)`
// (and visionos on visionOS), for CLMonitor and the conditions it monitors.
@available(iOS 17.0, macOS 14.0, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
public protocol CLCondition: Codable, Sendable {}

@available(iOS 17.0, macOS 14.0, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
public actor CLMonitor {
    public struct CircularGeographicCondition: CLCondition {
        public var center: CLLocationCoordinate2D { _shim() }
        public var radius: CLLocationDistance { _shim() }
        public init(center: CLLocationCoordinate2D, radius: CLLocationDistance) { _shim() as Void }
        public init(from decoder: any Decoder) throws { _shim() as Void }
        public func encode(to encoder: any Encoder) throws { _shim() as Void }
    }

    public struct Event: Sendable {
        public enum State: Int, Sendable {
            case unknown = 0
            case satisfied = 1
            case unsatisfied = 2
            case unmonitored = 3
        }
        public var identifier: String { _shim() }
        public var state: CLMonitor.Event.State { _shim() }
        public var date: Date { _shim() }
        @available(iOS 18.0, macOS 15.0, watchOS 11.0, *)
        public var conditionLimitExceeded: Bool { _shim() }
    }

    public struct Events: AsyncSequence, Sendable {
        public typealias Element = CLMonitor.Event
        public struct Iterator: AsyncIteratorProtocol {
            public mutating func next() async throws -> CLMonitor.Event? { _shim() }
        }
        public func makeAsyncIterator() -> Iterator { _shim() }
    }

    public init(_ name: String) async { _shim() as Void }
    public var identifiers: [String] { _shim() }
    public var events: CLMonitor.Events { _shim() }
    public func add(_ condition: some CLCondition, identifier: String, assuming state: CLMonitor.Event.State = .unknown) { _shim() as Void }
    public func remove(_ identifier: String) { _shim() as Void }
}
