extension BeekonConfig {
    /// A configuration for a backend you run yourself (the reference's "self-managed"
    /// mode): uploads go to `sync.url`; nil `sync` is local-only. Every other field takes
    /// its default unless given, exactly as `BeekonConfig(preset:sync:…)` would.
    ///
    /// ```swift
    /// try await Beekon.shared.configure(
    ///     BeekonConfig.selfManaged(sync: SyncConfig(url: URL(string: "https://api.example.com/locations")!)))
    /// ```
    public static func selfManaged(
        sync: SyncConfig?,
        preset: Preset = .balanced,
        whenStationary: StationaryPolicy = .pause
    ) -> BeekonConfig {
        BeekonConfig(preset: preset, sync: sync, whenStationary: whenStationary)
    }
}
