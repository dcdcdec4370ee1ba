import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Expires open locate requests past their expiry once a second (publishing `expired`
/// on the stream); a `GET` of such a request expires it on the spot as well.
struct LocateExpiry: Service {
    let locates: LocateService
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                do {
                    try await locates.expireDue()
                } catch {
                    logger.warning("locate expiry failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
