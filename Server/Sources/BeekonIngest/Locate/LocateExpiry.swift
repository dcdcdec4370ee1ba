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
        await Periodic(interval: .seconds(1), ready: ready).run {
            do {
                try await locates.expireDue()
            } catch {
                Periodic.logFailure("locate expiry", error, logger: logger)
            }
        }
    }
}
