import BeekonWire
import Foundation
import Logging

/// One batch on the wire: the auth decision, the exchange, AU-6's one refresh-and-retry,
/// and the outcome classified by `StatusPolicy` and acted on (store, hold, retry).
extension SyncEngine {
    /// Sends one batch and acts on the outcome; returns whether the server accepted it
    /// (the caller then records the acknowledgement) and the drain may continue.
    /// `willSend` runs when the request is handed to the transport.
    func send(_ prepared: PreparedBatch, within lease: any ExecutionLease, willSend: @escaping @Sendable () -> Void = {}) async -> Bool {
        let batch = prepared.batch
        var authorization: String?
        if let auth {
            switch await auth.authorization() {
            case .proceed(let value): authorization = value
            case .dead: return await holdForDeadCredentials(status: nil)
            case .wait(let until): return await waitForAuth(until: until)
            }
        }
        guard var result = await exchange(prepared, authorization: authorization, within: lease, willSend: willSend) else {
            return await budgetExpired(batch)
        }
        var outcome = StatusPolicy.classify(result, now: clock.now())
        // 401/403 with refreshable auth (AU-6): one refresh, then one retry of the same batch.
        if case .unauthorized(let s) = outcome, let auth, auth.canRefresh {
            try? await store.recordAttempt(batch.id, status: s, error: nil)
            logger.info("upload unauthorized; refreshing the token and retrying once", metadata: ["batch": "\(batch.id.wireString)"])
            switch await auth.unauthorized(rejected: authorization) {
            case .proceed(let value):
                guard let retried = await exchange(prepared, authorization: value, within: lease) else {
                    return await budgetExpired(batch)
                }
                result = retried
                outcome = StatusPolicy.classify(result, now: clock.now())
            case .dead: return await holdForDeadCredentials(status: s)
            case .wait(let until): return await waitForAuth(until: until)
            }
        }
        let meta: Logger.Metadata = [
            "batch": "\(batch.id.wireString)", "locations": "\(batch.locations.count)",
            "events": "\(batch.events.count)", "outcome": "\(outcome)",
        ]
        do {
            switch outcome {
            case .accepted:
                // Marked uploaded by the drain, overlapping the next batch's upload.
                consecutiveFailures = 0
                drainOutcome.uploadedLocations += batch.locations.count
                drainOutcome.uploadedGeofenceEvents += batch.events.count
                logger.debug("batch accepted", metadata: meta)
                // The typed answer (`WireIngestAnswer`); an answer that is not the contract's lists nothing.
                if case .success(let response) = result,
                    let notices = (try? WireIngestAnswer.decode(response.body))?.locateRequests, !notices.isEmpty
                {
                    reportEvent.yield(.locateRequested(notices.map(\.id)))
                }
                return true
            case .rejected(let s):
                try await store.reject(batch, status: s, at: clock.now())
                logger.error("batch rejected by the server; rows set aside, not retried", metadata: meta)
                await report(.failed(.rejected(status: s)))
                return false
            case .unauthorized(let s):
                try await store.recordAttempt(batch.id, status: s, error: nil)
                logger.error("upload unauthorized; rows kept", metadata: meta)
                hold = .permanent
                await report(.failed(.auth(status: s)))
                return false
            case .retryable(let s, let retryAfter):
                let why = (try? result.get()).map { "HTTP \($0.status)" } ?? (result.failureValue.map { "\($0)" } ?? "?")
                try await store.recordAttempt(batch.id, status: s, error: why)
                logger.warning(
                    "upload failed, will retry",
                    metadata: meta.merging(["error": "\(why)", "status": "\(s.map(String.init) ?? "none")"]) { a, _ in a })
                await scheduleRetry(why, retryAfter: retryAfter)
                return false
            case .permanent(let s):
                if s == 409 {
                    // `beekon-ingest` answers 409 when this batch id was stored with other content: the
                    // id is spent, the rows go out under a new one (still no tight loop: held as permanent).
                    try await store.release(batch)
                } else {
                    try await store.recordAttempt(batch.id, status: s, error: nil)
                }
                logger.error("upload failed permanently; rows kept until the next interval, sync() or configure()", metadata: meta)
                hold = .permanent
                await report(.failed(.permanent(status: s)))
                return false
            }
        } catch {
            logger.error("could not record the upload outcome", metadata: ["error": "\(error)"])
            await scheduleRetry("could not record the upload outcome: \(error)")
            return false
        }
    }

    func exchange(
        _ prepared: PreparedBatch, authorization: String?, willSend: @Sendable () -> Void = {}
    ) async -> Result<HTTPResponse, HTTPTransportError> {
        let request = request(for: prepared, authorization: authorization)
        willSend()
        do {
            return .success(try await transport.send(request))
        } catch {
            return .failure(error)
        }
    }

    /// Dead refresh credentials (AU-5): keep every row, report `failed(.auth)`, wait for `configure()`.
    func holdForDeadCredentials(status code: Int?) async -> Bool {
        if hold != .authDead {
            logger.error("uploads paused: auth credentials are dead; rows are kept until configure() supplies new tokens")
        }
        hold = .authDead
        retryTask?.cancel()
        await report(.failed(.auth(status: code)))
        return false
    }

    /// No usable token yet (refresh failed transiently): retry at the breaker's deadline, or
    /// after the regular backoff while the breaker is closed.
    func waitForAuth(until: Date?) async -> Bool {
        // The deadline is on the refresher's clock (real time during a replay).
        let now = auth?.clock.now() ?? clock.now()
        let delay = until.map { Duration.milliseconds(Int64((max(0, $0.timeIntervalSince(now)) * 1000).rounded(.up))) }
        await scheduleRetry("no usable access token (the token refresh failed)", retryAfter: delay)
        return false
    }

    func request(for prepared: PreparedBatch, authorization: String?) -> HTTPRequest {
        var headers = config.headers.filter {
            let k = $0.key.lowercased()
            return k != "content-type" && k != "content-encoding" && k != "content-length"
        }
        headers["Content-Type"] = "application/json"
        if let authorization {
            // AU-1: auth's Authorization wins over a static one, whatever its spelling.
            headers = headers.filter { $0.key.lowercased() != "authorization" }
            headers["Authorization"] = authorization
        }
        if prepared.gzipped { headers["Content-Encoding"] = "gzip" }
        return HTTPRequest(url: config.url, method: "POST", headers: headers, body: prepared.body, timeout: config.effectiveRequestTimeout)
    }
}
