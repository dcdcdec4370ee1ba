import Logging
import ServiceLifecycle

/// How a server service waits: ``realSleep`` when it runs, a test's own clock in tests (a test
/// never waits an hour for a maintenance pass).
typealias Sleeper = @Sendable (Duration) async throws -> Void

/// The real wait: the one `Task.sleep` behind the services' cadences.
let realSleep: Sleeper = { try await Task.sleep(for: $0) }

/// The cadence of a background service that does one pass every `interval` once the store is
/// migrated, until the server stops: the event retention, the locate expiry, the partition
/// maintenance and the nudges.
///
/// The first pass comes one interval after readiness. A pass never starts once the service is
/// stopping (the store may be closed already), and a pass that fails because it was stopped
/// is not a failure (``logFailure(_:_:)``).
struct Periodic: Sendable {
    /// Time between passes.
    let interval: Duration
    /// Opens once the store is migrated (nil: it is).
    var ready: StoreReadiness? = nil
    /// Waits between passes.
    var sleep: Sleeper = realSleep

    /// Runs `pass` every interval until graceful shutdown or cancellation.
    func run(_ pass: @escaping @Sendable () async -> Void) async {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            while !Task.isCancelled {
                try? await sleep(interval)
                guard !Task.isCancelled else { return }
                await pass()
            }
        }
    }

    /// Logs a pass's failure as a warning, unless the service is stopping: a query cut by the
    /// stop throws `CancellationError` or finds the store closed, at every stop.
    static func logFailure(_ what: String, _ error: any Error, logger: Logger) {
        guard !Task.isCancelled else { return }
        logger.warning("\(what) failed", metadata: ["error": "\(error)"])
    }
}
