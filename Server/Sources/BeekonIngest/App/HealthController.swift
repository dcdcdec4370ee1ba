import Hummingbird

/// `GET /healthz` (200 when the database answers, else 503) and `GET /metrics` (Prometheus text; an
/// admin API key when auth is required).
struct HealthController: Sendable {
    let store: any LocationStore
    let metrics: IngestMetrics
    /// With auth required, `/metrics` needs an admin API key.
    let auth: Authenticator

    func register(on router: Router<BasicRequestContext>) {
        router.get("/healthz") { _, context in
            do {
                try await self.store.ping()
                return APIResponse.json(.ok, Array("{\"status\":\"ok\"}".utf8))
            } catch {
                context.logger.warning("health check failed", metadata: ["error": "\(error)"])
                return APIResponse.error(.serviceUnavailable, "unavailable", "\(error)")
            }
        }
        router.get("/metrics") { request, _ in
            guard self.auth.hasAdminKey(request.headers) else {
                return APIResponse.unauthorized("/metrics needs an API key when auth is required")
            }
            return APIResponse.json(.ok, self.metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
    }
}
