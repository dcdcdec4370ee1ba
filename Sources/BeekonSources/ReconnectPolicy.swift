/// How a live source (gpsd, a serial device) retries after losing its
/// connection, and when it gives up.
///
/// Attempts are spaced by a backoff that starts at `initialBackoff` and doubles
/// up to `maxBackoff`. The source gives up when it has been unable to connect
/// for `gracePeriod` in a row — counted from the moment the connection was
/// lost, or from `start` if it never connected — and its stream then throws
/// `LocationProviderError.servicesDisabled` (SDK state
/// `stopped(.locationServicesDisabled)`; the tracking intent is kept).
public struct ReconnectPolicy: Sendable, Hashable {
    /// How long the source may stay unreachable before it gives up (default 60 s).
    public var gracePeriod: Duration
    /// The first wait between attempts (default 0.25 s).
    public var initialBackoff: Duration
    /// The longest wait between attempts (default 5 s).
    public var maxBackoff: Duration

    /// Creates a policy.
    public init(
        gracePeriod: Duration = .seconds(60), initialBackoff: Duration = .milliseconds(250),
        maxBackoff: Duration = .seconds(5)
    ) {
        self.gracePeriod = gracePeriod
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }
}
