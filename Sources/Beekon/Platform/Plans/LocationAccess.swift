/// What CoreLocation says about access, gathered from `CLLocationManager`
/// (`authorizationStatus`, `locationServicesEnabled()`, `accuracyAuthorization`) and,
/// on iOS 18, from each `CLLocationUpdate`'s diagnostic flags. The glue copies the
/// values; ``decision`` judges them.
package struct LocationAccess: Sendable, Hashable {
    /// `CLAuthorizationStatus`, platform-neutral.
    package enum Authorization: Sendable, Hashable {
        /// The host app has not asked yet (the SDK never asks).
        case notDetermined
        /// Parental controls or a profile forbid location.
        case restricted
        /// The user refused, or revoked, access for this app.
        case denied
        /// Access while the app is in use (background delivery needs a background activity session).
        case whenInUse
        /// Access at any time.
        case always
    }

    /// `authorizationStatus`.
    package var authorization: Authorization = .always
    /// `CLLocationManager.locationServicesEnabled()`.
    package var servicesEnabled = true
    /// `accuracyAuthorization == .reducedAccuracy`.
    package var reducedAccuracy = false
    /// iOS 18 `CLLocationUpdate.authorizationDenied`.
    package var authorizationDenied = false
    /// iOS 18 `authorizationDeniedGlobally` (Location Services off for the device).
    package var authorizationDeniedGlobally = false
    /// iOS 18 `authorizationRestricted`.
    package var authorizationRestricted = false
    /// iOS 18 `authorizationRequestInProgress`.
    package var authorizationRequestInProgress = false
    /// iOS 18 `insufficientlyInUse`: When-In-Use access but the app is not in use.
    package var insufficientlyInUse = false
    /// iOS 18 `locationUnavailable`: no position can be computed right now.
    package var locationUnavailable = false
    /// iOS 18 `accuracyLimited`: only approximate positions.
    package var accuracyLimited = false
    /// iOS 18 `serviceSessionRequired`: updates need a `CLServiceSession`.
    package var serviceSessionRequired = false

    /// Creates a snapshot; every flag defaults to "fine".
    package init(authorization: Authorization = .always, servicesEnabled: Bool = true) {
        self.authorization = authorization
        self.servicesEnabled = servicesEnabled
    }

    /// Degradations that do not stop tracking: the public ``LocationHealth``.
    package typealias Quality = LocationHealth

    /// The verdict: stop with a reason, or keep tracking with a quality.
    package enum Decision: Sendable, Hashable {
        /// Tracking must end with this reason (LC-2).
        case stop(StopReason)
        /// Tracking continues; an empty set is full quality.
        case track(Quality)
    }

    /// One precedence, first match wins (documented in the README's iOS section):
    /// 1. services off (`locationServicesEnabled() == false` or `authorizationDeniedGlobally`)
    ///    → `stop(.locationServicesDisabled)`;
    /// 2. restricted (status or `authorizationRestricted`) → `stop(.permissionDenied)`;
    /// 3. denied (status or `authorizationDenied`) → `stop(.permissionDenied)`;
    /// 4. otherwise track, with every applicable quality flag: not determined / request in
    ///    progress → `awaitingAuthorization`; `accuracyLimited` or reduced accuracy →
    ///    `accuracyLimited`; `insufficientlyInUse`, `locationUnavailable` and
    ///    `serviceSessionRequired` → the flag of the same name. The host sees the set on
    ///    ``Beekon/locationHealth``.
    package var decision: Decision {
        if !servicesEnabled || authorizationDeniedGlobally { return .stop(.locationServicesDisabled) }
        if authorization == .restricted || authorizationRestricted { return .stop(.permissionDenied) }
        if authorization == .denied || authorizationDenied { return .stop(.permissionDenied) }
        var quality: Quality = []
        if authorization == .notDetermined || authorizationRequestInProgress { quality.insert(.awaitingAuthorization) }
        if accuracyLimited || reducedAccuracy { quality.insert(.accuracyLimited) }
        if insufficientlyInUse { quality.insert(.insufficientlyInUse) }
        if locationUnavailable { quality.insert(.locationUnavailable) }
        if serviceSessionRequired { quality.insert(.serviceSessionRequired) }
        return .track(quality)
    }

    /// The health the host sees: the quality of a `.track` decision, empty for a stop (the
    /// state stream then says why).
    package var health: LocationHealth {
        if case .track(let quality) = decision { return quality }
        return []
    }

    /// The provider error a stop decision surfaces as (the SDK maps it to the stop reason).
    package static func providerError(for reason: StopReason) -> LocationProviderError {
        switch reason {
        case .permissionDenied: return .permissionDenied
        case .locationServicesDisabled, .system, .user:
            return .servicesDisabled("Location Services are turned off for this device")
        }
    }
}
