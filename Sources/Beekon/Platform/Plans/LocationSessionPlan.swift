/// Which CoreLocation sessions the SDK holds (iOS 17+: `CLBackgroundActivitySession`;
/// iOS 18+: `CLServiceSession`), decided as a value so the rules are unit-tested on Linux
/// (XR-1, BY-10). The glue creates and invalidates exactly what ``next(held:occasion:)`` says.
///
/// Apple's rules, from the iOS 18 SDK headers:
/// - `CLBackgroundActivitySession.h`: "A new session may only become active while the app is
///   foregrounded and in direct use"; "An active session may be resumed immediately with this
///   method when the app is next run, even in the background"; "such a session which is not
///   resumed immediately on next run will end".
/// - `CLServiceSession.h`: "a CLServiceSession instance should be created while in-use, or
///   immediately when launched in the background if a matching session was held when previously
///   running. If an instance is created that does not meet either requirement, it will yield the
///   .insufficientlyInUse diagnostic"; "Passing an authorization requirement other than .none will
///   cause Location Services to seek the corresponding level of authorization from the user".
///
/// So: sessions are created at `start()` in the foreground, or at launch through the host's
/// synchronous launch call, and the `.always` service session also when Always is granted while
/// the app is in the background and tracking; power-mode changes, stationary pauses, probes and profile switches
/// never touch them (they change what the SDK admits, not which sessions exist); the service
/// session asks for no more than the authorization already granted (never a prompt).
package struct LocationSessionPlan: Sendable, Hashable {
    /// `CLServiceSession.AuthorizationRequirement`, platform-neutral.
    package enum ServiceAuthorization: Sendable, Hashable {
        /// `.none`: seeks no authorization from the user.
        case none
        /// `.whenInUse`.
        case whenInUse
        /// `.always`.
        case always
    }

    /// The sessions held.
    package struct Sessions: Sendable, Hashable {
        /// Whether a `CLBackgroundActivitySession` is held.
        package var backgroundActivity: Bool
        /// The `CLServiceSession` held and its requirement (nil: none held).
        package var service: ServiceAuthorization?

        /// No session.
        package static let none = Sessions(backgroundActivity: false, service: nil)

        /// Creates a set of sessions.
        package init(backgroundActivity: Bool, service: ServiceAuthorization?) {
            self.backgroundActivity = backgroundActivity
            self.service = service
        }
    }

    /// What happened.
    package enum Occasion: Sendable, Hashable {
        /// The host's synchronous launch call, with the persisted tracking intent set (a
        /// session was held when the app last ran): sessions are retaken at once, even in the
        /// background.
        case launch
        /// `start()` (or a resume after first use), in the foreground or not.
        case start(foreground: Bool)
        /// A power-mode change: pause, probe, resume, preset or profile switch.
        case powerModeChange
        /// The app moved between foreground and background.
        case appStateChange(foreground: Bool)
        /// The authorization status changed.
        case authorizationChange(foreground: Bool)
        /// Tracking stopped.
        case stop
    }

    /// The authorization status now.
    package var authorization: LocationAccess.Authorization

    /// A plan judged against `authorization`.
    package init(authorization: LocationAccess.Authorization) {
        self.authorization = authorization
    }

    /// The service session's requirement for the current status: the level already granted,
    /// `.none` otherwise (not determined, denied, restricted), so creating it never prompts.
    package var serviceAuthorization: ServiceAuthorization {
        switch authorization {
        case .always: return .always
        case .whenInUse: return .whenInUse
        case .notDetermined, .denied, .restricted: return .none
        }
    }

    /// The sessions to hold after `occasion`, given the ones `held`. A session absent from
    /// `held` appears only at `.launch` or in the foreground.
    package func next(held: Sessions, occasion: Occasion) -> Sessions {
        switch occasion {
        case .stop:
            return .none
        case .launch:
            return Sessions(backgroundActivity: true, service: serviceAuthorization)
        case .start(let foreground):
            guard foreground else { return held }
            return Sessions(backgroundActivity: true, service: serviceAuthorization)
        case .authorizationChange(let foreground):
            if foreground { return Sessions(backgroundActivity: true, service: serviceAuthorization) }
            // Always granted while backgrounded (the system's later Always prompt, or Settings):
            // `CLServiceSession.h`, "An app with Always authorization, but which is not holding such a
            // CLServiceSession will not be able to receive CLLocationUpdate.liveUpdates() or
            // CLMonitor.events() when it is not in-use. So be careful to take one when the user
            // configures always-operation". Taken while tracking (a service session is held).
            guard authorization == .always, held.service != nil, held.service != .always else { return held }
            return Sessions(backgroundActivity: held.backgroundActivity, service: .always)
        case .powerModeChange, .appStateChange:
            return held
        }
    }

    /// Whether moving from `held` to `next` creates a session (a new object, or a service
    /// session with a different requirement, which is a new object too).
    package static func creates(from held: Sessions, to next: Sessions) -> Bool {
        (next.backgroundActivity && !held.backgroundActivity) || (next.service != nil && next.service != held.service)
    }
}
