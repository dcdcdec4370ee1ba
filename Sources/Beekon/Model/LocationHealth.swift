/// What the platform says is wrong with location delivery while tracking continues: the
/// conditions that do not stop a session (LC-2 reserves stops for access and services) but
/// that the host app should act on, e.g. by asking the user to open the app or to grant
/// Always access. Published on ``Beekon/locationHealth`` whenever it changes; empty when
/// delivery is fine. On iOS 18 the flags are `CLLocationUpdate`'s diagnostics (XR-1).
public struct LocationHealth: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates a set from its raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// `insufficientlyInUse`: the app holds When-In-Use access but is not in use, and no
    /// background session is active (one created in the background stays inactive until the
    /// app is foregrounded). Updates stop until the user opens the app.
    public static let insufficientlyInUse = LocationHealth(rawValue: 1 << 0)
    /// `serviceSessionRequired`: the OS wants a `CLServiceSession` that the SDK could not take
    /// (it is only created in the foreground or at launch). Open the app once.
    public static let serviceSessionRequired = LocationHealth(rawValue: 1 << 1)
    /// `locationUnavailable`: no position can be computed right now (indoors, no signal).
    public static let locationUnavailable = LocationHealth(rawValue: 1 << 2)
    /// `accuracyLimited` or reduced accuracy: approximate positions only (fixes also get
    /// FX-5 `low_accuracy`).
    public static let accuracyLimited = LocationHealth(rawValue: 1 << 3)
    /// Authorization is not determined yet, or a prompt is showing: the host app asks (the
    /// SDK never does).
    public static let awaitingAuthorization = LocationHealth(rawValue: 1 << 4)
}
