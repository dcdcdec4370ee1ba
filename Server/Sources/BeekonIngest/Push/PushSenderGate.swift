import BeekonPrimitives
import Logging

/// Whether a push sender may send, shared by APNs and FCM: a credential that cannot be read at
/// start, or that the provider refuses, disables the sender for good (until the server is
/// restarted with a valid one), and the reason is logged once, as an error.
final class PushSenderGate: Sendable {
    /// `APNs` or `FCM`, as the log line names the provider.
    let provider: String
    /// What the operator must restart with (`a valid key`).
    let remedy: String
    private let logger: Logger
    private let reason = Locked<String?>(nil)

    init(provider: String, remedy: String, logger: Logger) {
        self.provider = provider
        self.remedy = remedy
        self.logger = logger
    }

    /// Why the sender is disabled, if it is.
    var disabledReason: String? { reason.value }

    /// Disables the sender; the first reason is kept and logged, later ones are dropped.
    func disable(_ why: String) {
        let first = reason.withLock { r in
            guard r == nil else { return false }
            r = why
            return true
        }
        if first {
            logger.error(
                "\(provider) sender disabled: \(why) — no \(provider) pushes are sent until the server is restarted with \(remedy)")
        }
    }

    /// Reads the sender's credential; one that cannot be read disables the sender
    /// (`what: error`) and gives nil.
    func load<T>(_ what: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            disable("\(what): \(error)")
            return nil
        }
    }
}
