@testable import Beekon
import Testing

/// Authorization and the iOS 18 diagnostic flags → stop reason (LC-2) or quality, with
/// the one documented precedence (BY-10).
@Suite("CoreLocation access decision")
struct LocationAccessTests {
    @Test func fullAccessTracksAtFullQuality() {
        #expect(LocationAccess(authorization: .always).decision == .track([]))
    }

    @Test func servicesOffWinsOverEverything() {
        var a = LocationAccess(authorization: .denied, servicesEnabled: false)
        a.authorizationRestricted = true
        a.authorizationDenied = true
        #expect(a.decision == .stop(.locationServicesDisabled))
        var b = LocationAccess(authorization: .always)
        b.authorizationDeniedGlobally = true
        b.authorizationDenied = true
        #expect(b.decision == .stop(.locationServicesDisabled))
    }

    @Test func restrictedAndDeniedArePermissionDenied() {
        #expect(LocationAccess(authorization: .restricted).decision == .stop(.permissionDenied))
        #expect(LocationAccess(authorization: .denied).decision == .stop(.permissionDenied))
        var flagged = LocationAccess(authorization: .always)
        flagged.authorizationDenied = true
        flagged.accuracyLimited = true  // a stop outranks any quality flag
        #expect(flagged.decision == .stop(.permissionDenied))
        var restricted = LocationAccess(authorization: .whenInUse)
        restricted.authorizationRestricted = true
        #expect(restricted.decision == .stop(.permissionDenied))
    }

    @Test func qualityFlagsDoNotStopTracking() {
        var a = LocationAccess(authorization: .whenInUse)
        a.insufficientlyInUse = true
        a.accuracyLimited = true
        a.locationUnavailable = true
        a.serviceSessionRequired = true
        #expect(a.decision == .track([.insufficientlyInUse, .accuracyLimited, .locationUnavailable, .serviceSessionRequired]))
        var reduced = LocationAccess(authorization: .always)
        reduced.reducedAccuracy = true
        #expect(reduced.decision == .track(.accuracyLimited))
    }

    @Test func undecidedAuthorizationWaitsForTheHostAppNeverStops() {
        // The SDK never prompts (the host does, When In Use then Always): not determined is not a stop.
        #expect(LocationAccess(authorization: .notDetermined).decision == .track(.awaitingAuthorization))
        var prompting = LocationAccess(authorization: .whenInUse)
        prompting.authorizationRequestInProgress = true
        #expect(prompting.decision == .track(.awaitingAuthorization))
    }

    @Test func stopsSurfaceAsTheProviderErrorsTheSDKMapsToStopReasons() {
        #expect(LocationAccess.providerError(for: .permissionDenied) == .permissionDenied)
        guard case .servicesDisabled = LocationAccess.providerError(for: .locationServicesDisabled) else {
            Issue.record("services off must be servicesDisabled")
            return
        }
    }
}

/// Preset → live-updates configuration and `CLLocationManager` settings (BY-10).
@Suite("CoreLocation power plan")
struct LocationPowerPlanTests {
    @Test func thePresetMapOfTheReference() {
        #expect(LocationPowerPlan(mode: Preset.saver.powerMode).liveConfiguration == .default)
        #expect(LocationPowerPlan(mode: Preset.balanced.powerMode).liveConfiguration == .default)
        #expect(LocationPowerPlan(mode: Preset.precision.powerMode).liveConfiguration == .automotiveNavigation)
    }

    @Test func managerSettingsPauseAutomaticallyOnlyForSaver() {
        for mode in PowerMode.allCases {
            let plan = LocationPowerPlan(mode: mode)
            #expect(plan.pausesAutomatically == (mode == .low), "the coarse preset only (reference 004); the wake region resumes it")
            #expect(plan.allowsBackgroundUpdates)
            #expect(plan.showsBackgroundIndicator)
            #expect(plan.significantChanges)  // relaunch works in every mode
        }
        let precision = LocationPowerPlan(mode: .high)
        #expect(precision.desiredAccuracy == .bestForNavigation)
        #expect(precision.activityType == .automotiveNavigation)
        #expect(precision.distanceFilterMeters == nil)
        #expect(LocationPowerPlan(mode: .balanced).desiredAccuracy == .best)
        #expect(LocationPowerPlan(mode: .low).desiredAccuracy == .hundredMeters)
    }

    @Test func pausedStopsContinuousUpdatesButNotSignificantChanges() {
        let paused = LocationPowerPlan(mode: .paused)
        #expect(!paused.continuousUpdates)
        #expect(paused.liveConfiguration == nil)
        #expect(paused.significantChanges)
    }
}
