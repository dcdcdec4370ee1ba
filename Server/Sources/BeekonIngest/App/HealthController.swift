import Hummingbird

/// `GET /healthz` (200 when the database answers, else 503) and `GET /metrics` (Prometheus text; an
/// admin API key when auth is required).
struct HealthController: Sendable {
    let store: any LocationStore
    let metrics: IngestMetrics
    /// With auth required, `/metrics` needs an admin API key.
    let auth: Authenticator
    /// The live hub, for the open-stream gauge and the stalled-viewer counter.
    let hub: LiveHub
    /// The connection cap, for its gauges and the refused-connection counter.
    let connections: ConnectionLimit

    func register(on router: Router<IngestRequestContext>) {
        router.get("/healthz") { _, context in
            do {
                try await self.store.ping()
                return APIResponse.json(.ok, Array("{\"status\":\"ok\"}".utf8))
            } catch {
                context.logger.warning("health check failed", metadata: ["error": "\(error)"])
                // The cause goes to the log only: /healthz is open to anyone (issue 28, item 7).
                return APIResponse.error(.serviceUnavailable, "unavailable", "the database is not answering")
            }
        }
        router.get("/metrics") { request, _ in
            guard self.auth.hasAdminKey(request.headers) else {
                return APIResponse.unauthorized("/metrics needs an API key when auth is required")
            }
            let text = self.hub.metricsText() + self.connections.metricsText() + self.store.writerMetricsText
            let body = self.metrics.render() + Array(text.utf8)
            return APIResponse.json(.ok, body, contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }
}
