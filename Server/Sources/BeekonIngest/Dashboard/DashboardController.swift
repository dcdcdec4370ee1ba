import BeekonWire
import Foundation
import Hummingbird

/// The dashboard (`GET /` and `GET /dashboard`: one self-contained page, no third-party
/// code, nothing fetched from the internet) and the history endpoint it draws tracks from:
///
/// `GET /v1/devices/{install_id}/history?from=&to=&zoom=` → `{"install_id","zoom",
/// "tolerance_m","raw_count","count","truncated","points":[[lon,lat,ms]…]}`: the device's
/// fixes in `[from, to)` (default: the last 24 h), simplified for Web Mercator zoom `zoom`
/// (0–22; radial pass + Douglas–Peucker at one pixel), raw without `zoom`. Viewer
/// credentials as for the read API; a share sees its window, coarsened.
struct DashboardController: Sendable {
    let history: any HistoryStore
    let access: ViewerAccess
    let tileURL: String?
    let now: @Sendable () -> Date

    /// Most fixes read for one history answer (a month at 1 Hz is 2.6 M).
    static let maxPoints = 4_000_000

    func register(on router: Router<BasicRequestContext>) {
        for path in ["/", "/dashboard"] {
            router.get(RouterPath(path)) { _, _ in self.page() }
        }
        router.get("/v1/devices/:install/history") { request, context in
            guard let install = ReadController.uuid(context.parameters.get("install")) else { return ReadController.badID("install_id") }
            switch await self.access.grant(for: request, what: "history") {
            case .refused(let response): return response
            case .granted(let grant):
                guard grant.scope.sees(install) else { return ReadController.notShared() }
                do {
                    return try await self.history(install, request.uri.queryParameters, grant.scope)
                } catch {
                    context.logger.error("history read failed", metadata: ["error": "\(error)"])
                    return APIResponse.unavailable("the database could not be read; retry later")
                }
            }
        }
    }

    /// The page, with the deployment's tile URL (if any) filled in.
    func page() -> Response {
        var html = String(decoding: PackageResources.dashboard_html, as: UTF8.self)
        var w = WireJSONWriter(capacity: 64)
        if let tileURL { w.string(tileURL) } else { w.raw("null") }
        html = html.replacingOccurrences(of: "\"__TILE_URL__\"", with: String(decoding: w.bytes, as: UTF8.self))
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        // Everything the page needs is inline or same-origin: no third-party code can run.
        headers[.contentSecurityPolicy] =
            "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data: https: http:; connect-src 'self'"
        return APIResponse.json(.ok, Array(html.utf8), contentType: "text/html; charset=utf-8", headers: headers)
    }

    func history(_ install: UUID, _ params: Parameters, _ scope: ViewerScope) async throws(StoreError) -> Response {
        let nowMs = WireTimestamp(now()).millis
        var to = nowMs + 1
        var from = nowMs - 86_400_000
        if let text = params["to"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return ReadController.badParameter("to", "an ISO 8601 time") }
            to = t.millis
        }
        if let text = params["from"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return ReadController.badParameter("from", "an ISO 8601 time") }
            from = t.millis
        }
        var zoom: Int?
        if let text = params["zoom"] {
            guard let z = Int(text), (0...22).contains(z) else { return ReadController.badParameter("zoom", "0...22") }
            zoom = z
        }
        if let start = scope.windowStart(nowMillis: nowMs) { from = max(from, start) }
        var points = try await history.trackPoints(installId: install, fromMillis: from, toMillis: to, limit: Self.maxPoints + 1)
        let truncated = points.count > Self.maxPoints
        if truncated { points.removeLast() }
        let rawCount = points.count
        var tolerance = 0.0
        if let zoom, let first = points.first {
            let simplifier = TrackSimplifier(zoom: zoom, latitude: first.latitude)
            tolerance = simplifier.toleranceMetres
            points = simplifier.simplify(points)
        }
        if let metres = scope.precisionMetres {
            let c = Coarsening(metres: metres)
            points = points.map {
                let (lat, lon) = c.coordinate(latitude: $0.latitude, longitude: $0.longitude)
                return TrackPoint(millis: $0.millis, latitude: lat, longitude: lon)
            }
        }
        var w = WireJSONWriter(capacity: 160 + points.count * 40)
        w.raw("{\"install_id\":")
        w.string(install.wireString)
        w.raw(",\"zoom\":")
        w.raw(zoom.map(String.init) ?? "null")
        w.raw(",\"tolerance_m\":")
        w.number((tolerance * 100).rounded() / 100)
        w.raw(",\"raw_count\":\(rawCount),\"count\":\(points.count),\"truncated\":\(truncated),\"points\":[")
        for (i, p) in points.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("[")
            w.number((p.longitude * 1e6).rounded() / 1e6)
            w.raw(",")
            w.number((p.latitude * 1e6).rounded() / 1e6)
            w.raw(",\(p.millis)]")
        }
        w.raw("]}")
        return APIResponse.json(.ok, w.bytes)
    }
}
