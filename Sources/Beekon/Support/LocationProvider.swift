import Foundation

/// How much power (and accuracy) the SDK asks of a location source.
public enum PowerMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Best accuracy, highest power (the Precision preset).
    case high
    /// Normal tracking (the Balanced preset).
    case balanced
    /// Coarser, cheaper fixes (the Saver preset).
    case low
    /// The lowest-power mode the source has (stationary pause); fixes may stop.
    case paused
}

/// Why a location source cannot deliver fixes.
public enum LocationProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The user or the OS refused access to location.
    case permissionDenied
    /// The location service or receiver is unavailable for good (maps to `stopped(.locationServicesDisabled)`).
    case servicesDisabled(String)
    /// The source could not be opened or read: bad file, bad format, I/O error.
    case failed(String)

    public var description: String {
        switch self {
        case .permissionDenied: return "location permission denied"
        case .servicesDisabled(let why): return "location services disabled: \(why)"
        case .failed(let why): return why
        }
    }
}

/// The one seam between the SDK and a concrete location source (SRC-1):
/// gpsd, NMEA, replay, CoreLocation or a scripted test provider.
///
/// The SDK calls `start(mode:)` once per tracking run and consumes the stream
/// until it calls `stop()`. A stream that finishes normally means the source is
/// exhausted (the end of a replay); one that throws `LocationProviderError`
/// means it failed.
public protocol LocationProvider: Sendable {
    /// Begins delivering fixes; throws `LocationProviderError` when the source cannot start.
    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error>
    /// Changes the power mode of a running source (e.g. `.paused` while stationary).
    func setPowerMode(_ mode: PowerMode) async
    /// Stops delivering fixes and releases the source; the current stream finishes.
    func stop() async
    /// Asks for one fresh fix independent of tracking; nil when none arrives in time.
    func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix?
    /// What the platform reports about delivery (``LocationHealth``), every change; nil
    /// when the source reports nothing. Read once per SDK instance.
    func healthChanges() async -> AsyncStream<LocationHealth>?
    /// Called synchronously from the host's launch call (``Beekon/launch()``) when a session
    /// was being tracked: retake whatever the platform only grants "immediately upon launch"
    /// (CoreLocation's background activity and service sessions). Must not block.
    func retakeSessionsAtLaunch()
}

extension LocationProvider {
    /// Sources that cannot take a one-off reading answer nil.
    public func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? { nil }
    /// Sources without platform diagnostics report nothing.
    public func healthChanges() async -> AsyncStream<LocationHealth>? { nil }
    /// Sources without launch-bound sessions do nothing.
    public func retakeSessionsAtLaunch() {}
}
