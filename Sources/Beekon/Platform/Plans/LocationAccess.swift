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

    /// Degradations that do not stop tracking (LC-2 reserves stops for access and services).
    package struct Quality: OptionSet, Sendable, Hashable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Approximate positions only (reduced accuracy); fixes also get FX-5 `low_accuracy`.
        package static let reducedAccuracy = Quality(rawValue: 1 << 0)
        /// No delivery while the app is not in use (When-In-Use without a background session).
        package static let foregroundOnly = Quality(rawValue: 1 << 1)
        /// No position can be computed at the moment (indoors, no signal); tracking waits.
        package static let temporarilyUnavailable = Quality(rawValue: 1 << 2)
        /// The OS wants a `CLServiceSession`; the provider creates one.
        package static let needsServiceSession = Quality(rawValue: 1 << 3)
        /// Authorization has not been decided (or a prompt is showing); the host app asks.
        package static let awaitingAuthorization = Quality(rawValue: 1 << 4)
    }

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
    ///    `reducedAccuracy`; `insufficientlyInUse` → `foregroundOnly`;
    ///    `locationUnavailable` → `temporarilyUnavailable`; `serviceSessionRequired` →
    ///    `needsServiceSession`.
    package var decision: Decision {
        if !servicesEnabled || authorizationDeniedGlobally { return .stop(.locationServicesDisabled) }
        if authorization == .restricted || authorizationRestricted { return .stop(.permissionDenied) }
        if authorization == .denied || authorizationDenied { return .stop(.permissionDenied) }
        var quality: Quality = []
        if authorization == .notDetermined || authorizationRequestInProgress { quality.insert(.awaitingAuthorization) }
        if accuracyLimited || reducedAccuracy { quality.insert(.reducedAccuracy) }
        if insufficientlyInUse { quality.insert(.foregroundOnly) }
        if locationUnavailable { quality.insert(.temporarilyUnavailable) }
        if serviceSessionRequired { quality.insert(.needsServiceSession) }
        return .track(quality)
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
