import BeekonTestSupport
import BeekonTesting
import Foundation
import Testing

@testable import Beekon

/// CoreLocation sessions held the way Apple documents (XR-1, BY-10).
/// `CLBackgroundActivitySession.h`: "A new session may only become active while the app is
/// foregrounded and in direct use" and "may be resumed immediately … when the app is next run,
/// even in the background"; `CLServiceSession.h`: "Passing an authorization requirement other
/// than .none will cause Location Services to seek the corresponding level of authorization".
@Suite("Location session plan")
struct SessionPlanTests {
    typealias Plan = LocationSessionPlan
    static let authorizations: [LocationAccess.Authorization] = [.notDetermined, .restricted, .denied, .whenInUse, .always]
    static let held: [Plan.Sessions] = [
        .none, Plan.Sessions(backgroundActivity: true, service: nil),
        Plan.Sessions(backgroundActivity: true, service: Plan.ServiceAuthorization.none),
        Plan.Sessions(backgroundActivity: true, service: .whenInUse), Plan.Sessions(backgroundActivity: true, service: .always),
    ]
    static let backgroundOccasions: [Plan.Occasion] = [
        .start(foreground: false), .powerModeChange, .appStateChange(foreground: false),
        .appStateChange(foreground: true), .authorizationChange(foreground: false), .stop,
    ]

    @Test("XR-1: no session is ever created in the background, except at launch and for an Always grant while tracking")
    func noSessionCreatedInTheBackgroundExceptAtLaunch() {
        for authorization in Self.authorizations {
            let plan = Plan(authorization: authorization)
            for held in Self.held {
                for occasion in Self.backgroundOccasions {
                    let next = plan.next(held: held, occasion: occasion)
                    let alwaysGrant =
                        occasion == .authorizationChange(foreground: false) && authorization == .always && held.service != nil
                        && held.service != .always
                    #expect(Plan.creates(from: held, to: next) == alwaysGrant, "\(occasion) with \(held) under \(authorization)")
                }
                // The launch call retakes the sessions at once, foreground or not.
                #expect(plan.next(held: held, occasion: .launch).backgroundActivity)
            }
        }
    }

    @Test("XR-1: Always granted while backgrounded takes the .always service session; the activity session is kept")
    func anAlwaysGrantInTheBackgroundTakesTheAlwaysSession() {
        let tracking = Plan(authorization: .whenInUse).next(held: .none, occasion: .start(foreground: true))
        #expect(tracking == Plan.Sessions(backgroundActivity: true, service: .whenInUse))
        let granted = Plan(authorization: .always).next(held: tracking, occasion: .authorizationChange(foreground: false))
        #expect(
            granted == Plan.Sessions(backgroundActivity: true, service: .always),
            "CLServiceSession.h: take one when the user configures always-operation")
        #expect(Plan.creates(from: tracking, to: granted))
        #expect(
            Plan(authorization: .always).next(held: .none, occasion: .authorizationChange(foreground: false)) == .none,
            "not tracking: nothing")
        #expect(Plan(authorization: .whenInUse).next(held: tracking, occasion: .authorizationChange(foreground: false)) == tracking)
    }

    @Test("XR-1: sessions are held across pause, probe, resume and profile switches")
    func sessionsHeldAcrossModeChanges() {
        let plan = Plan(authorization: .always)
        var held = plan.next(held: .none, occasion: .start(foreground: true))
        #expect(held == Plan.Sessions(backgroundActivity: true, service: .always))
        let started = held
        // Stationary pause, 60 s probe, resume, foreground→background profile switch, and back.
        for occasion: Plan.Occasion in [
            .powerModeChange, .powerModeChange, .powerModeChange, .appStateChange(foreground: false), .powerModeChange,
            .appStateChange(foreground: true),
        ] {
            let next = plan.next(held: held, occasion: occasion)
            #expect(next == started && !Plan.creates(from: held, to: next), "\(occasion)")
            held = next
        }
        #expect(plan.next(held: held, occasion: .stop) == .none)
    }

    @Test("XR-1: the service session never asks for more than is granted: no prompt from an undetermined status")
    func noPromptFromAnUndeterminedStatus() {
        #expect(Plan(authorization: .notDetermined).serviceAuthorization == .none)
        #expect(Plan(authorization: .denied).serviceAuthorization == .none)
        #expect(Plan(authorization: .restricted).serviceAuthorization == .none)
        #expect(Plan(authorization: .whenInUse).serviceAuthorization == .whenInUse)
        #expect(Plan(authorization: .always).serviceAuthorization == .always)
        let started = Plan(authorization: .notDetermined).next(held: .none, occasion: .start(foreground: true))
        #expect(started.service == Plan.ServiceAuthorization.none)
        // Granted later, in the foreground: the requirement follows the status (a new session).
        let upgraded = Plan(authorization: .always).next(held: started, occasion: .authorizationChange(foreground: true))
        #expect(upgraded.service == .always)
        // Always seen in the background while tracking: the .always session is taken then;
        // When In Use seen there waits for the foreground.
        #expect(Plan(authorization: .always).next(held: started, occasion: .authorizationChange(foreground: false)).service == .always)
        #expect(Plan(authorization: .whenInUse).next(held: started, occasion: .authorizationChange(foreground: false)) == started)
    }

    @Test("XR-1: iOS 18 diagnostics reach the host as LocationHealth, not a silent flag")
    func diagnosticsBecomeHealth() async throws {
        var access = LocationAccess(authorization: .whenInUse)
        access.insufficientlyInUse = true
        access.serviceSessionRequired = true
        #expect(access.health == [.insufficientlyInUse, .serviceSessionRequired])
        #expect(LocationAccess(authorization: .notDetermined).health == .awaitingAuthorization)
        var off = LocationAccess(authorization: .always)
        off.authorizationDeniedGlobally = true
        #expect(off.health == [], "a stop is the state stream's to say")

        let dir = TempDir()
        let provider = ScriptedProvider()
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: provider, clock: TestClock()))
        try await beekon.start()
        var health = beekon.locationHealth.makeAsyncIterator()
        #expect(await health.next() == [])
        await provider.report([.insufficientlyInUse])
        #expect(await health.next() == [.insufficientlyInUse])
        #expect(beekon.currentLocationHealth == .insufficientlyInUse)
        #expect(beekon.currentState == .tracking, "tracking goes on; the host acts (asks the user to open the app)")
        try await beekon.stop()
    }

    @Test("BY-10, XR-1: the launch call retakes sessions synchronously when a session was being tracked")
    func theLaunchCallRetakesSessionsSynchronously() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let killed = Beekon(dependencies: BeekonDependencies(databasePath: dir.db, provider: ScriptedProvider(), clock: clock))
        try await killed.start()
        let session = await killed.sessionID
        // The OS relaunches the app in the background: the host's didFinishLaunching calls launch().
        let provider = ScriptedProvider()
        let relaunched = Beekon(
            dependencies: BeekonDependencies(databasePath: dir.db, provider: provider, clock: clock, resumesOnFirstUse: true))
        #expect(relaunched.launch() == true)
        #expect(provider.sessionRetakes == 1, "before launch() returned: no async hop")
        for await state in relaunched.state where state == .tracking { break }
        #expect(await relaunched.sessionID == session)
        try await relaunched.stop()
        // After a stop nothing is retaken.
        let again = ScriptedProvider()
        let third = Beekon(
            dependencies: BeekonDependencies(databasePath: dir.db, provider: again, clock: clock, resumesOnFirstUse: true))
        #expect(third.launch() == false)
        #expect(again.sessionRetakes == 0)
        _ = try await third.storeReport()
        #expect(third.currentState == .idle)
    }

    @Test("XR-1: a first launch (no database yet) retakes nothing")
    func aFirstLaunchRetakesNothing() {
        let dir = TempDir()
        let provider = ScriptedProvider()
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: TestClock(), resumesOnFirstUse: true))
        #expect(beekon.launch() == false)
        #expect(provider.sessionRetakes == 0)
    }
}
