/// Whether the app is on screen (BY-4): selects the foreground or background location
/// profile. Automatic from the app lifecycle on Apple platforms; the agent takes it from its
/// config (`appState`). Set it with `Beekon.setAppState(_:)`.
public enum AppState: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user is looking at the app: responsive tracking, foreground heartbeat.
    case foreground
    /// The app is in the background: coarse tracking, check-ins from the cached fix.
    case background
}
