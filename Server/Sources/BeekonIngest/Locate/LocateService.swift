import BeekonWire
import Foundation
import Logging

/// Creates locate requests under the per-device rate limit and moves them through their
/// lifecycle. Every change is a conditional write that appends a `locate` event, so
/// concurrent instances (or a device answering while the expiry sweep runs) never
/// publish one change twice; a lost race is retried from the row as stored.
package struct LocateService: Sendable {
    /// What `create` decided.
    package enum Creation: Sendable, Equatable {
        /// Stored; the new request.
        case created(LocateRequest)
        /// Over the device's rate limit: retry after this many seconds.
        case limited(retryAfterSeconds: Int)
    }

    let store: any LocateStore
    let limit: LocateRateLimit
    let expirySeconds: Int
    let now: @Sendable () -> Date
    let makeID: @Sendable () -> UUID
    /// Called after a change was committed (wakes local streams and command channels).
    let onChange: @Sendable () -> Void

    /// Creates a service.
    package init(
        store: any LocateStore, limit: LocateRateLimit, expirySeconds: Int, now: @escaping @Sendable () -> Date,
        makeID: @escaping @Sendable () -> UUID, onChange: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.limit = limit
        self.expirySeconds = expirySeconds
        self.now = now
        self.makeID = makeID
        self.onChange = onChange
    }

    var nowMillis: Int64 { WireTimestamp(now()).millis }

    /// Creates a request for a device, or refuses it over the rate limit (`limit`, default the
    /// service's; a circle's wake-up passes its stricter one, issue 52).
    package func create(installId: UUID, requestedBy: String, limit: LocateRateLimit? = nil) async throws(StoreError) -> Creation {
        let nowMs = nowMillis
        let request = LocateRequest(
            id: makeID(), installId: installId, requestedBy: requestedBy, createdAtMillis: nowMs,
            expiresAtMillis: nowMs + Int64(expirySeconds) * 1000)
        // Checked and stored in one step: a burst cannot slip past the limit (issue 28).
        if let wait = try await store.insertLocate(request, payload: request.json(includeFix: false), limit: limit ?? self.limit) {
            return .limited(retryAfterSeconds: wait)
        }
        onChange()
        return .created(request)
    }

    /// The request as it stands now (an open request past its expiry is expired first).
    package func request(id: UUID) async throws(StoreError) -> LocateRequest? {
        guard let request = try await store.locateRequest(id: id) else { return nil }
        guard request.state.isOpen, nowMillis >= request.expiresAtMillis else { return request }
        return try await apply(.expire, to: id)
    }

    /// The device's open requests, each marked delivered (they are being handed to it now).
    package func deliver(to installId: UUID) async throws(StoreError) -> [LocateRequest] {
        var out: [LocateRequest] = []
        for request in try await store.openLocateRequests(installId: installId) {
            if let updated = try await apply(.deliver, to: request.id), updated.state.isOpen { out.append(updated) }
        }
        return out
    }

    /// Whether the device has an open request (without marking anything delivered).
    package func hasOpenRequest(for installId: UUID) async throws(StoreError) -> Bool {
        try await !store.openLocateRequests(installId: installId).filter { $0.expiresAtMillis > nowMillis }.isEmpty
    }

    /// Expires every open request past its expiry; returns how many expired.
    @discardableResult
    package func expireDue() async throws(StoreError) -> Int {
        var count = 0
        for request in try await store.dueLocateRequests(nowMillis: nowMillis) {
            if try await apply(.expire, to: request.id)?.state == .expired { count += 1 }
        }
        return count
    }

    /// Applies a change to the stored request (retrying when another writer moved it first);
    /// nil when the request does not exist.
    @discardableResult
    package func apply(_ change: LocateRequest.Change, to id: UUID) async throws(StoreError) -> LocateRequest? {
        for _ in 0..<5 {
            guard let stored = try await store.locateRequest(id: id) else { return nil }
            var updated = stored
            let moved = updated.apply(change, nowMillis: nowMillis)
            if updated == stored { return stored }
            if try await store.updateLocate(updated, from: stored.state, payload: moved ? updated.json(includeFix: false) : nil) {
                if moved { onChange() }
                return updated
            }
        }
        return try await store.locateRequest(id: id)
    }

    /// Records the fixes of a stored upload that carry a request id as answers; `stored` says
    /// whether a fix really was stored (only a stored fix answers, issue 28).
    func recordAnswers(_ batch: IngestBatch, logger: Logger, stored: (WireLocation) async -> Bool) async {
        for location in batch.envelope.locations {
            guard let requestId = location.locateRequestId else { continue }
            guard await stored(location) else {
                logger.info("locate answer by a fix that was not stored ignored", metadata: ["request_id": "\(requestId.wireString)"])
                continue
            }
            do {
                // Only the device asked may answer (an id from another device is ignored).
                guard let asked = try await store.locateRequest(id: requestId), asked.installId == batch.envelope.device.installId
                else {
                    logger.info("locate answer for an unknown request ignored", metadata: ["request_id": "\(requestId.wireString)"])
                    continue
                }
                try await apply(.answer(fixId: location.id, fixJSON: ViewerJSON.fix(location, of: batch)), to: requestId)
            } catch {
                logger.warning("locate answer not recorded", metadata: ["request_id": "\(requestId.wireString)", "error": "\(error)"])
            }
        }
    }
}
