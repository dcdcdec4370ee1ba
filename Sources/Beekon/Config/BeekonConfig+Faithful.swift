extension BeekonConfig {
    /// "The track, at the fewest points" (BY-9): error-bounded admission at `maxDeviationMeters`
    /// (default 25) on the `precision` power mode, a stored fix at least every
    /// `maxIntervalSeconds` of fix time, and the stationary pause of the default policy.
    public static func faithful(
        maxDeviationMeters: Double = 25, maxIntervalSeconds: Double = BeekonConfig.defaults.maxIntervalBetweenLocationsSeconds
    ) -> BeekonConfig {
        BeekonConfig(
            preset: .precision, maxDeviationMeters: maxDeviationMeters,
            maxIntervalBetweenLocationsSeconds: maxIntervalSeconds)
    }
}
