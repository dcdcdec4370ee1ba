import BeekonGzip
import BeekonWire
import Foundation
import Hummingbird
import Logging

/// `POST <ingest path>`: reads the body within its caps, gunzips it, validates
/// schema v1, stores it with dedupe and answers only after the commit.
///
/// Status codes (what the SDK does with them in brackets):
/// 200 stored or already stored [delete rows] · 400 not JSON / bad gzip [drop] ·
/// 422 schema violation or a value past ``FixSanity`` [drop] · 401 missing/invalid credential or revoked device [refresh, retry once] ·
/// 403 a device credential uploading for another install, or a cross-site write while auth is off [keep, auth error] ·
/// 409 `batch_conflict`: the batch id was stored before with other content [re-batch under a new id] ·
/// 413 body or inflated body too large [keep] · 415 not `Content-Type: application/json`, or
/// unknown Content-Encoding [keep] ·
/// 503 database failure [retry with backoff].
struct IngestController: Sendable {
    let store: any LocationStore
    let auth: Authenticator
    let metrics: IngestMetrics
    let maxBodyBytes: Int
    let maxDecompressedBytes: Int
    let now: @Sendable () -> Date
    /// Woken after a commit that stored something, so local live streams see it at once.
    let hub: LiveHub?
    /// Told of every accepted upload (its device's last contact changed).
    var monitor: DeviceStatusMonitor? = nil
    /// Answers carried by the upload's fixes, and the device's open requests for the 2xx body.
    var locates: LocateService? = nil

    func register(on router: Router<IngestRequestContext>, path: String) {
        router.post(RouterPath(path)) { request, context in
            let start = ContinuousClock.now
            let response = await self.handle(request, logger: context.logger)
            self.metrics.ingestDuration.record(ContinuousClock.now - start)
            if Self.countedRejects.contains(response.status.code) { self.metrics.rejected(response.status.code) }
            return response
        }
    }

    static let countedRejects = Set(IngestMetrics.rejectStatuses)

    func handle(_ request: Request, logger: Logger) async -> Response {
        guard let principal = auth.principal(of: request.headers) else {
            return APIResponse.unauthorized("send an API key or an access token: Authorization: Bearer <token>")
        }
        // A JSON type is required: a web page cannot send one cross-site without a CORS preflight
        // (which this server never grants), so a `no-cors` fetch cannot write (issue 28, finding 6).
        guard Self.isJSON(request.headers[.contentType]) else {
            return APIResponse.error(
                .unsupportedMediaType, "unsupported_media_type", "send the envelope with Content-Type: application/json")
        }
        let encoding = Authenticator.trimmed((request.headers[.contentEncoding] ?? "identity")[...]).lowercased()
        let gzipped: Bool
        switch encoding {
        case "gzip", "x-gzip": gzipped = true
        case "identity", "": gzipped = false
        default:
            return APIResponse.error(
                .unsupportedMediaType, "unsupported_encoding",
                "Content-Encoding '\(encoding)' is not supported; send gzip or identity")
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > maxBodyBytes {
            return tooLarge("the body (\(length) bytes) exceeds the \(maxBodyBytes)-byte limit")
        }
        var body: [UInt8] = []
        do {
            for try await chunk in request.body {
                guard body.count + chunk.readableBytes <= maxBodyBytes else {
                    return tooLarge("the body exceeds the \(maxBodyBytes)-byte limit")
                }
                body.append(contentsOf: chunk.readableBytesView)
            }
        } catch {
            logger.debug("request body ended early", metadata: ["error": "\(error)"])
            return APIResponse.error(.badRequest, "incomplete_body", "the request body could not be read completely")
        }
        if gzipped {
            do {
                body = try Gzip.inflate(body, limit: maxDecompressedBytes)
            } catch {
                switch error {
                case .tooLarge: return tooLarge(error.description)
                case .corrupt: return APIResponse.error(.badRequest, "bad_gzip", error.description)
                }
            }
        }
        let envelope: WireEnvelope
        do {
            envelope = try WireEnvelope.decode(Data(body))
        } catch {
            switch error {
            case .malformed: return APIResponse.error(.badRequest, "malformed", error.description)
            case .invalid, .unsupportedSchemaVersion:
                return APIResponse.error(.unprocessableContent, "invalid", error.description)
            }
        }
        // Values no device measures (issue 50): refused like a schema violation, nothing stored.
        if let (path, reason) = FixSanity.problem(envelope) {
            return APIResponse.error(.unprocessableContent, "invalid", "\(path): \(reason)")
        }
        // A device credential uploads only for its own install (issue 28).
        if let refusal = await auth.refusal(principal, actingFor: envelope.device.installId) { return refusal }
        let batch = IngestBatch(envelope: envelope, receivedAt: WireTimestamp(now()), principal: principal.recorded)
        do {
            let result = try await store.ingest(batch)
            // A batch id already stored with other content: refused, so the device knows to resend
            // those fixes under a new batch id (they were not stored; a 200 would lose them).
            if result.duplicateBatch, try await !store.holdsEverything(of: envelope) {
                return APIResponse.error(
                    .conflict, "batch_conflict",
                    "batch_id \(envelope.batchId.wireString) was already stored with other content; send these fixes under a new batch_id")
            }
            metrics.stored(result)
            if result.storedAnything { hub?.poke() }
            monitor?.ingested(batch)
            logger.debug(
                "batch stored",
                metadata: [
                    "batch_id": "\(envelope.batchId.wireString)", "stored": "\(result.locationsStored)",
                    "duplicate": "\(result.locationsDuplicate)", "duplicate_batch": "\(result.duplicateBatch)",
                ])
            guard let locates else { return APIResponse.json(.ok, [UInt8](result.answer(locateRequests: nil).encoded())) }
            // Only a fix this upload stored answers (a replayed batch stored nothing; a fix whose id
            // was already stored with other content is not this fix).
            if !result.duplicateBatch {
                await locates.recordAnswers(batch, logger: logger) { location in await self.isStored(location, of: envelope) }
            }
            // Must-ignore for old SDKs: the device's open locate requests, now delivered.
            let pending = (try? await locates.deliver(to: envelope.device.installId)) ?? []
            return APIResponse.json(.ok, [UInt8](result.answer(locateRequests: pending.map(\.notice)).encoded()))
        } catch {
            metrics.storeFailures.increment()
            logger.error("batch not stored", metadata: ["batch_id": "\(envelope.batchId.wireString)", "error": "\(error)"])
            return APIResponse.unavailable("the batch was not stored; retry later")
        }
    }

    /// Whether `location` is stored as sent, for the envelope's install.
    func isStored(_ location: WireLocation, of envelope: WireEnvelope) async -> Bool {
        let at = location.timestamp.millis
        let query = FixQuery(
            installId: envelope.device.installId, from: WireTimestamp(millis: at), to: WireTimestamp(millis: at + 1), limit: 5_000)
        guard let page = try? await store.fixes(query) else { return false }
        return page.fixes.contains {
            $0.location.id == location.id && $0.location.latitude == location.latitude && $0.location.longitude == location.longitude
        }
    }

    /// Whether a `Content-Type` value is `application/json` (parameters such as a charset allowed).
    static func isJSON(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        // Foundation's `trimmingCharacters` was 1 % of the server's CPU at 2,000 uploads/s (issue 32).
        let media = contentType.split(separator: ";", maxSplits: 1).first.map(Authenticator.trimmed) ?? ""
        return media.lowercased() == "application/json"
    }

    private func tooLarge(_ message: String) -> Response {
        APIResponse.error(.contentTooLarge, "too_large", message + "; send smaller batches")
    }
}

extension IngestResult {
    /// The device's answer (`WireIngestAnswer`): these counts, and the open locate requests
    /// when the server delivers them (nil: no locate channel, the member is omitted).
    func answer(locateRequests: [WireLocateNotice]?) -> WireIngestAnswer {
        WireIngestAnswer(
            duplicateBatch: duplicateBatch, locationsStored: locationsStored, locationsDuplicate: locationsDuplicate,
            eventsStored: eventsStored, eventsDuplicate: eventsDuplicate, locateRequests: locateRequests)
    }
}
