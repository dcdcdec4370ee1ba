/// The fix pipeline's configuration (BY-4, BY-6): profiles, heartbeat, diagnostic log.
extension BeekonConfig {
    /// This configuration with the profile of `state` applied (the base values where it has none).
    public func resolved(for state: AppState) -> BeekonConfig {
        let profile = state == .foreground ? foregroundProfile : backgroundProfile
        return profile?.applied(to: self) ?? self
    }

    func validatePipeline() throws(BeekonError) {
        if let h = heartbeatSeconds, !(h.isFinite && h >= 1) {
            throw .invalidConfiguration("heartbeatSeconds must be a number ≥ 1 (got \(h))")
        }
        try foregroundProfile?.validate("foregroundProfile")
        try backgroundProfile?.validate("backgroundProfile")
        guard (100...1_000_000).contains(diagnosticLogCapacity) else {
            throw .invalidConfiguration("diagnosticLogCapacity must be within 100…1000000 (got \(diagnosticLogCapacity))")
        }
    }
}

extension BeekonConfig {
    /// The check-in interval the envelope declares (`device.check_in_interval_seconds`, BY-8):
    /// `checkInIntervalSeconds` rounded under `pauseWithCheckIns` (a stationary device then
    /// reports that often), nil otherwise (no check-ins are promised).
    package var declaredCheckInIntervalSeconds: Int? {
        guard whenStationary == .pauseWithCheckIns, checkInIntervalSeconds.isFinite, checkInIntervalSeconds >= 1 else { return nil }
        return Int(checkInIntervalSeconds.rounded(.up))
    }
}
