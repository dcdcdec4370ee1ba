#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    // The Apple glue. Compiled into `Beekon` on Apple platforms, and on Linux into the
    // type-check-only target `BeekonAppleGlueCheck` against the `CoreLocation`/`UIKit`/
    // `BackgroundTasks` shims (see Shims/README.md). Decisions live in Platform/Plans.
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    extension CLLocation {
        /// CoreLocation's raw values, one property each; `LocationSample` judges them.
        var beekonSample: LocationSample {
            LocationSample(
                timestamp: timestamp, latitude: coordinate.latitude, longitude: coordinate.longitude,
                horizontalAccuracy: horizontalAccuracy, altitude: altitude, verticalAccuracy: verticalAccuracy,
                speed: speed, course: course, isSimulatedBySoftware: sourceInformation?.isSimulatedBySoftware)
        }
    }

    extension LocationAccess {
        /// What a location manager reports about access right now.
        init(manager: CLLocationManager) {
            let status: Authorization
            switch manager.authorizationStatus {
            case .notDetermined: status = .notDetermined
            case .restricted: status = .restricted
            case .denied: status = .denied
            #if !os(macOS)
                // `API_UNAVAILABLE(macos)` (CLLocationManager.h): macOS grants only Always.
                case .authorizedWhenInUse: status = .whenInUse
            #endif
            case .authorizedAlways: status = .always
            @unknown default: status = .denied
            }
            self.init(authorization: status, servicesEnabled: CLLocationManager.locationServicesEnabled())
            reducedAccuracy = manager.accuracyAuthorization == .reducedAccuracy
        }

        #if os(iOS) || BEEKON_APPLE_SHIM
            /// Adds the diagnostic flags of one live update (iOS 18; not read on macOS).
            @available(iOS 18.0, *)
            mutating func read(_ update: CLLocationUpdate) {
                authorizationDenied = update.authorizationDenied
                authorizationDeniedGlobally = update.authorizationDeniedGlobally
                authorizationRestricted = update.authorizationRestricted
                authorizationRequestInProgress = update.authorizationRequestInProgress
                insufficientlyInUse = update.insufficientlyInUse
                locationUnavailable = update.locationUnavailable
                accuracyLimited = update.accuracyLimited
                serviceSessionRequired = update.serviceSessionRequired
            }
        #endif
    }

    extension LocationPowerPlan.Accuracy {
        /// The `kCLLocationAccuracy…` constant.
        var clValue: CLLocationAccuracy {
            switch self {
            case .bestForNavigation: return kCLLocationAccuracyBestForNavigation
            case .best: return kCLLocationAccuracyBest
            case .hundredMeters: return kCLLocationAccuracyHundredMeters
            case .threeKilometers: return kCLLocationAccuracyThreeKilometers
            }
        }
    }

    extension LocationPowerPlan.ActivityType {
        /// The `CLActivityType`.
        var clValue: CLActivityType {
            switch self {
            case .other: return .other
            case .automotiveNavigation: return .automotiveNavigation
            }
        }
    }

    extension LocationPowerPlan.LiveConfiguration {
        /// The `CLLocationUpdate.LiveConfiguration`.
        @available(iOS 17.0, macOS 14.0, *)
        var clValue: CLLocationUpdate.LiveConfiguration {
            switch self {
            case .default: return .default
            case .automotiveNavigation: return .automotiveNavigation
            }
        }
    }

    extension RefreshRegion {
        /// The centre as a CoreLocation coordinate.
        var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: latitude, longitude: longitude) }
    }

    extension StationaryWakePlan.Region {
        /// The centre as a CoreLocation coordinate.
        var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: latitude, longitude: longitude) }
    }

    extension Geofence {
        /// The centre as a CoreLocation coordinate.
        var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: latitude, longitude: longitude) }
    }
#endif
