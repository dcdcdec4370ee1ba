import BeekonPrimitives
import Foundation
import Beekon

/// A `LocationProvider` that reads fixes from gpsd, the standard Linux GNSS
/// daemon, over its JSON protocol on TCP (SRC-2).
///
/// - Connects to `host:port` (default `127.0.0.1:2947`) with POSIX sockets,
///   sends `?WATCH={"enable":true,"json":true}` and reads TPV and SKY reports;
///   see `GPSDFixAssembler` for the field mapping, the one-fix-per-epoch
///   dedupe and the horizontal-accuracy rule.
/// - gpsd going away (restart, crash, network) is retried with capped
///   exponential backoff (`ReconnectPolicy`); after `policy.gracePeriod`
///   (default 60 s) without a connection the stream throws
///   `LocationProviderError.servicesDisabled`, which the SDK turns into
///   `stopped(.locationServicesDisabled)`. The grace period also applies at
///   start: the provider waits for a gpsd that is still starting up.
/// - Power: `.paused` sends `?WATCH={"enable":false}` (with no other watcher
///   gpsd stops reading the receiver, which may then sleep); every other mode
///   re-enables the watch. gpsd has no accuracy/power knob per client, so
///   `.high`, `.balanced` and `.low` are the same watch.
/// - Reading happens on a dedicated thread; `stop()` or dropping the stream
///   ends it at once.
public final class GPSDProvider: LocationProvider {
    /// Where gpsd listens and how to treat it.
    public struct Configuration: Sendable, Hashable {
        /// Host name or address (default `127.0.0.1`).
        public var host: String
        /// TCP port (default 2947).
        public var port: Int
        /// Retry and give-up policy.
        public var policy: ReconnectPolicy
        /// Bound on one connection attempt (default 3 s).
        public var connectTimeout: Duration
        /// Seconds without a new report of an epoch before it is emitted (default 1).
        public var settle: Double

        /// gpsd's default port.
        public static let defaultPort = 2947

        /// Creates a configuration.
        public init(
            host: String = "127.0.0.1", port: Int = defaultPort, policy: ReconnectPolicy = ReconnectPolicy(),
            connectTimeout: Duration = .seconds(3), settle: Double = 1.0
        ) {
            self.host = host
            self.port = port
            self.policy = policy
            self.connectTimeout = connectTimeout
            self.settle = settle
        }
    }

    private struct State {
        var reader: ReconnectingReader?
        var socket: GPSDSocket?
    }

    /// The configuration given at creation.
    public let configuration: Configuration
    private let onEvent: (@Sendable (LiveSourceEvent) -> Void)?
    /// The one-shot fix behind `currentLocation` (BY-2).
    private let fresh: FreshFixes
    private let state = Locked(State())

    /// Creates a provider; `onEvent` receives connection events (for logging) on the reader
    /// thread; `clock` times `currentLocation`'s wait.
    public init(
        configuration: Configuration = Configuration(),
        onEvent: (@Sendable (LiveSourceEvent) -> Void)? = nil,
        clock: any BeekonClock = SystemClock()
    ) {
        self.configuration = configuration
        self.onEvent = onEvent
        self.fresh = FreshFixes(clock: clock)
    }

    /// Counters of the current (or last) run.
    public var statistics: GPSDStatistics { state.withLock { $0.socket?.statistics } ?? GPSDStatistics() }

    /// Starts watching gpsd; a previous stream of this provider finishes. Never
    /// throws for an unreachable gpsd: the stream throws after the grace period.
    public func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        let socket = GPSDSocket(
            host: configuration.host, port: configuration.port,
            connectTimeout: configuration.connectTimeout, settle: configuration.settle)
        let (stream, continuation) = AsyncThrowingStream<RawFix, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let reader: ReconnectingReader
        do {
            reader = try ReconnectingReader(
                source: socket, policy: configuration.policy, mode: mode,
                continuation: continuation, onEvent: onEvent)
        } catch {
            throw LocationProviderError.failed("gpsd provider: \(error.message)")
        }
        continuation.onTermination = { [weak reader] _ in reader?.stop() }
        let previous = state.withLock { s -> ReconnectingReader? in
            defer {
                s.reader = reader
                s.socket = socket
            }
            return s.reader
        }
        previous?.stop()
        reader.start()
        return fresh.tap(stream)
    }

    /// `.paused` turns the watch off; other modes turn it back on.
    public func setPowerMode(_ mode: PowerMode) async {
        state.withLock { $0.reader }?.setMode(mode)
    }

    /// Stops reading; the current stream finishes normally.
    public func stop() async {
        state.withLock { s -> ReconnectingReader? in
            defer { s.reader = nil }
            return s.reader
        }?.stop()
        fresh.ended()
    }

    /// One fresh fix (BY-2, `Beekon.handleLocateRequest(id:)`): the next one of the running
    /// watch, else the first of a run started for it and stopped after; nil when none
    /// arrives within `timeout` (on the clock given at creation).
    public func currentLocation(timeout: Duration, mode: PowerMode) async throws -> RawFix? {
        try await fresh.next(timeout: timeout, start: { try await self.start(mode: mode) }, stop: { await self.stop() })
    }
}
