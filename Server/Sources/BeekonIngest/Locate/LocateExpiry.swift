import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Expires open locate requests past their expiry once a second (publishing `expired`
/// on the stream), once the store is migrated; a `GET` of such a request expires it on the
/// spot as well.
struct LocateExpiry: Service {
    let locates: LocateService
    let logger: Logger
    /// Opens once the store is migrated (nil: it is).
    var ready: StoreReadiness? = nil

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await ready?.wait()
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                // Stopped while asleep: the store may be closed already (it logged a failure at every stop).
                guard !Task.isCancelled else { return }
                do {
                    try await locates.expireDue()
                } catch {
                    // Stopped during the query (a CancellationError, logged at every stop): not a failure.
                    guard !Task.isCancelled else { return }
                    logger.warning("locate expiry failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
