// Linux-only shim of Apple's CoreLocation, for type-checking Beekon's Apple glue in CI.
// NEVER built on Apple platforms (Package.swift declares it only `#if os(Linux)`).
//
// Declares only what Sources/Beekon/Platform/Apple uses, with the names, types and
// availability of Apple's published interface: iPhoneOS18.0.sdk (Xcode 16.0), the
// CoreLocation headers (CLLocation.h, CLLocationManager.h, CLRegion.h, CLCircularRegion.h,
// CLBeaconRegion.h, CLBeaconIdentityConstraint.h, CLServiceSession.h, CLMonitor.h, CLError.h) and the Swift overlay's CLLocationUpdate /
// CLMonitor / CLBackgroundActivitySession / CLServiceSession refinements. Differences,
// because Linux has no Objective-C runtime: delegate methods that are `@objc optional`
// on Apple are requirements with empty default implementations here; bodies trap.
import Foundation

@inline(never) func _shim<T>(_ function: String = #function) -> T {
    fatalError("CoreLocation shim: \(function) is not implemented on Linux")
}

public typealias CLLocationDegrees = Double
public typealias CLLocationDistance = Double
public typealias CLLocationAccuracy = Double
public typealias CLLocationSpeed = Double
public typealias CLLocationDirection = Double

public struct CLLocationCoordinate2D: Sendable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees
    public init() {
        latitude = 0
        longitude = 0
    }
    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

public let kCLDistanceFilterNone: CLLocationDistance = -1
public let kCLLocationAccuracyBestForNavigation: CLLocationAccuracy = -2
public let kCLLocationAccuracyBest: CLLocationAccuracy = -1
public let kCLLocationAccuracyNearestTenMeters: CLLocationAccuracy = 10
public let kCLLocationAccuracyHundredMeters: CLLocationAccuracy = 100
public let kCLLocationAccuracyKilometer: CLLocationAccuracy = 1000
public let kCLLocationAccuracyThreeKilometers: CLLocationAccuracy = 3000

@available(iOS 15.0, macOS 12.0, watchOS 8.0, tvOS 15.0, *)
open class CLLocationSourceInformation: NSObject, @unchecked Sendable {
    open var isSimulatedBySoftware: Bool { _shim() }
    open var isProducedByAccessory: Bool { _shim() }
}

open class CLLocation: NSObject, @unchecked Sendable {
    open var coordinate: CLLocationCoordinate2D { _shim() }
    open var altitude: CLLocationDistance { _shim() }
    open var horizontalAccuracy: CLLocationAccuracy { _shim() }
    open var verticalAccuracy: CLLocationAccuracy { _shim() }
    open var course: CLLocationDirection { _shim() }
    open var speed: CLLocationSpeed { _shim() }
    open var timestamp: Date { _shim() }
    @available(iOS 15.0, macOS 12.0, watchOS 8.0, tvOS 15.0, *)
    open var sourceInformation: CLLocationSourceInformation? { _shim() }
}

public enum CLAuthorizationStatus: Int32, @unchecked Sendable {
    case notDetermined = 0
    case restricted = 1
    case denied = 2
    @available(iOS 8.0, macOS 10.12, *)
    case authorizedAlways = 3
    // CLLocationManager.h (iPhoneOS18.0.sdk): `kCLAuthorizationStatusAuthorizedWhenInUse
    // API_AVAILABLE(ios(8.0)) API_UNAVAILABLE(macos)` — "This value is not available on MacOS".
    @available(iOS 8.0, *) @available(macOS, unavailable)
    case authorizedWhenInUse = 4
}

@available(iOS 14.0, macOS 11.0, watchOS 7.0, tvOS 14.0, *)
public enum CLAccuracyAuthorization: Int, @unchecked Sendable {
    case fullAccuracy = 0
    case reducedAccuracy = 1
}

public enum CLActivityType: Int, @unchecked Sendable {
    case other = 1
    case automotiveNavigation = 2
    case fitness = 3
    case otherNavigation = 4
    @available(iOS 12.0, macOS 10.14, *)
    case airborne = 5
}

public struct CLError: Error, Hashable, Sendable {
    public enum Code: Int, @unchecked Sendable {
        case locationUnknown = 0
        case denied = 1
        case network = 2
    }
    public var code: CLError.Code { _shim() }
}

open class CLRegion: NSObject, @unchecked Sendable {
    open var identifier: String { _shim() }
    @available(iOS 7.0, macOS 10.10, *)
    open var notifyOnEntry: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(iOS 7.0, macOS 10.10, *)
    open var notifyOnExit: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
}

@available(iOS 7.0, macOS 10.10, *)
open class CLCircularRegion: CLRegion, @unchecked Sendable {
    public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) { _shim() as Void }
}

@available(iOS 7.0, macOS 10.10, *)
public enum CLRegionState: Int, @unchecked Sendable {
    case unknown = 0
    case inside = 1
    case outside = 2
}

public typealias CLBeaconMajorValue = UInt16
public typealias CLBeaconMinorValue = UInt16

@available(iOS 13.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
open class CLBeaconIdentityConstraint: NSObject, @unchecked Sendable {
    public init(uuid: UUID) { _shim() as Void }
    public init(uuid: UUID, major: CLBeaconMajorValue) { _shim() as Void }
    public init(uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue) { _shim() as Void }
}

@available(iOS 7.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
open class CLBeaconRegion: CLRegion, @unchecked Sendable {
    @available(iOS 13.0, macOS 10.15, *)
    public init(beaconIdentityConstraint: CLBeaconIdentityConstraint, identifier: String) { _shim() as Void }
    @available(iOS 7.0, macOS 10.15, *)
    open var notifyEntryStateOnDisplay: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
}

@available(iOS 7.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
open class CLBeacon: NSObject, @unchecked Sendable {
    @available(iOS 13.0, macOS 10.15, *)
    open var uuid: UUID { _shim() }
    open var major: NSNumber { _shim() }
    open var minor: NSNumber { _shim() }
    open var rssi: Int { _shim() }
    @available(iOS 13.0, macOS 10.15, *)
    open var timestamp: Date { _shim() }
}

public protocol CLLocationManagerDelegate: NSObjectProtocol {
    @available(iOS 6.0, macOS 10.9, *)
    func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation])
    func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)
    @available(iOS 14.0, macOS 11.0, watchOS 7.0, tvOS 14.0, *)
    func locationManagerDidChangeAuthorization(_ manager: CLLocationManager)
    @available(iOS 4.0, macOS 10.8, *)
    func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion)
    @available(iOS 4.0, macOS 10.8, *)
    func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion)
    @available(iOS 7.0, macOS 10.10, *)
    func locationManager(_ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion)
    @available(iOS 13.0, macOS 10.15, *)
    func locationManager(
        _ manager: CLLocationManager, didRange beacons: [CLBeacon], satisfying beaconConstraint: CLBeaconIdentityConstraint)
    @available(iOS 4.0, macOS 10.8, *)
    func locationManager(_ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error)
    // CLLocationManagerDelegate.h: "Invoked when location updates are automatically paused."
    @available(iOS 6.0, macOS 10.15, *)
    func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager)
}

extension CLLocationManagerDelegate {
    public func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {}
    public func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {}
    public func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {}
    public func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {}
    public func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {}
    public func locationManager(_ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion) {}
    public func locationManager(
        _ manager: CLLocationManager, didRange beacons: [CLBeacon], satisfying beaconConstraint: CLBeaconIdentityConstraint
    ) {}
    public func locationManager(_ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error) {}
    public func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager) {}
}

open class CLLocationManager: NSObject {
    override public init() { _shim() as Void }
    open class func locationServicesEnabled() -> Bool { _shim() }
    @available(iOS 14.0, macOS 11.0, watchOS 7.0, tvOS 14.0, *)
    open var authorizationStatus: CLAuthorizationStatus { _shim() }
    @available(iOS 14.0, macOS 11.0, watchOS 7.0, tvOS 14.0, *)
    open var accuracyAuthorization: CLAccuracyAuthorization { _shim() }
    weak open var delegate: (any CLLocationManagerDelegate)?
    open var location: CLLocation? { _shim() }
    open var desiredAccuracy: CLLocationAccuracy {
        get { _shim() }
        set { _shim() as Void }
    }
    open var distanceFilter: CLLocationDistance {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(iOS 6.0, macOS 10.15, watchOS 4.0, *)
    open var activityType: CLActivityType {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(iOS 6.0, *) @available(macOS, unavailable) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open var pausesLocationUpdatesAutomatically: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(iOS 9.0, macOS 10.15, watchOS 4.0, *) @available(tvOS, unavailable)
    open var allowsBackgroundLocationUpdates: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(iOS 11.0, *) @available(macOS, unavailable) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open var showsBackgroundLocationIndicator: Bool {
        get { _shim() }
        set { _shim() as Void }
    }
    @available(tvOS, unavailable)
    open func startUpdatingLocation() { _shim() as Void }
    open func stopUpdatingLocation() { _shim() as Void }
    @available(iOS 9.0, macOS 10.14, *)
    open func requestLocation() { _shim() as Void }
    @available(iOS 4.0, macOS 10.7, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func startMonitoringSignificantLocationChanges() { _shim() as Void }
    @available(iOS 4.0, macOS 10.7, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func stopMonitoringSignificantLocationChanges() { _shim() as Void }
    @available(iOS 4.0, macOS 10.8, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open var monitoredRegions: Set<CLRegion> { _shim() }
    @available(iOS 5.0, macOS 10.8, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func startMonitoring(for region: CLRegion) { _shim() as Void }
    @available(iOS 4.0, macOS 10.8, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func stopMonitoring(for region: CLRegion) { _shim() as Void }
    @available(iOS 7.0, macOS 10.10, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func requestState(for region: CLRegion) { _shim() as Void }
    @available(iOS 7.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open class func isRangingAvailable() -> Bool { _shim() }
    @available(iOS 13.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func startRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) { _shim() as Void }
    @available(iOS 13.0, macOS 10.15, *) @available(watchOS, unavailable) @available(tvOS, unavailable)
    open func stopRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) { _shim() as Void }
}
