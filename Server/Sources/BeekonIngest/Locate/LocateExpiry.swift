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

/// An ingest 2xx body: the stored counts plus `locate_requests`, the device's open
/// requests (a must-ignore addition: SDKs that do not know it ignore it).
struct IngestReply: Encodable {
    var result: IngestResult
    var locateRequests: [LocateRequest]

    struct Notice: Encodable {
        var id: String
        var createdAt: String
        var expiresAt: String

        enum CodingKeys: String, CodingKey {
            case id
            case createdAt = "created_at"
            case expiresAt = "expires_at"
        }
    }

    enum CodingKeys: String, CodingKey {
        case locateRequests = "locate_requests"
    }

    func encode(to encoder: any Encoder) throws {
        try result.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(
            locateRequests.map {
                Notice(
                    id: $0.id.wireString, createdAt: WireTimestamp(millis: $0.createdAtMillis).description,
                    expiresAt: WireTimestamp(millis: $0.expiresAtMillis).description)
            }, forKey: .locateRequests)
    }
}
