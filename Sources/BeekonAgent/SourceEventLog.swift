import Beekon
import BeekonPrimitives
import BeekonSources
import Foundation
import Logging

/// Logs a live source's connection events as plain lines (journald-friendly)
/// and remembers why it gave up, for the agent's exit message.
final class SourceEventLog: Sendable {
    private let fallback: Logger
    private let attached = Locked<Logger?>(nil)
    private let lastFailure = Locked<String?>(nil)

    init(logger: Logger) { self.fallback = logger }

    /// Logs through the SDK's logger from now on, so events also reach its diagnostic log (BY-6).
    func attach(_ logger: Logger) { attached.value = logger }

    private var logger: Logger { attached.value ?? fallback }

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
