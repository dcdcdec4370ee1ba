import Beekon
import BeekonSources
import Foundation
import Logging

/// Logs a live source's connection events as plain lines (journald-friendly)
/// and remembers why it gave up, for the agent's exit message.
final class SourceEventLog: Sendable {
    private let logger: Logger
    private let lastFailure = Locked<String?>(nil)

    init(logger: Logger) { self.logger = logger }

    /// Why the source gave up, if it did.
    var failure: String? { lastFailure.value }

    /// The handler to give a provider.
    var handler: @Sendable (LiveSourceEvent) -> Void {
        { [self] event in record(event) }
    }

    func record(_ event: LiveSourceEvent) {
        switch event {
        case .connected, .ended:
            logger.notice("\(event)")
        case .disconnected:
            logger.warning("\(event)")
        case .attemptFailed:
            logger.info("\(event)")
        case .gaveUp(let what, let reason):
            lastFailure.value = "\(what) \(reason)"
            logger.error("\(event)")
        }
    }
}
