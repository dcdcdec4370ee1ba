import BeekonWire
import Crypto
import Foundation
import Hummingbird

/// The dashboard (`GET /` and `GET /dashboard`: one self-contained page, no third-party
/// code, nothing fetched from the internet) and the history endpoint it draws tracks from:
///
/// `GET /v1/devices/{install_id}/history?from=&to=&zoom=&fit=&exact=` → see `HistoryAnswer`:
/// the device's fixes in `[from, to)` (default: the last 24 h), raw without `zoom`/`fit`;
/// simplified for Web Mercator zoom `zoom` (0–22), or for the zoom that fits the window's
/// track in a `fit=WIDTHxHEIGHT` view, to within one pixel of every fix: exactly from the
/// raw fixes for windows up to 6 h (or `exact=true`), else from the overview tier
/// (`TrackOverview`). Viewer credentials as for the read API; a share sees its window,
/// coarsened, on every path.
struct DashboardController: Sendable {
    let history: any HistoryStore
    let access: ViewerAccess
    let tileURL: String?
    let now: @Sendable () -> Date

    /// Most fixes read for one history answer (a month at 1 Hz is 2.6 M).
    static let maxPoints = 4_000_000

    func register(on router: Router<IngestRequestContext>) {
        for path in ["/", "/dashboard"] {
            router.get(RouterPath(path)) { _, _ in self.page() }
        }
        let viewers = router.group().add(middleware: ViewerMiddleware(access: access, what: "history", device: "install_id"))
        viewers.get("/v1/devices/:install_id/history") { request, context in
            let (grant, install) = try (context.requireViewer(), context.requireDevice())
            do {
                return try await self.history(install, request.uri.queryParameters, grant.scope)
            } catch {
                context.logger.error("history read failed", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the database could not be read; retry later")
            }
        }
    }

    /// The page, with the deployment's tile URL (if any) filled in.
    func page() -> Response {
        var html = String(decoding: PackageResources.dashboard_html, as: UTF8.self)
        var w = WireJSONWriter(capacity: 64)
        if let tileURL, IngestConfiguration.isValidTileURL(tileURL) { w.string(tileURL) } else { w.raw("null") }
        html = html.replacingOccurrences(of: "\"__TILE_URL__\"", with: String(decoding: w.bytes, as: UTF8.self))
        // The map script is its own file in the source tree; the page stays one response.
        html = html.replacingOccurrences(of: "\"__MAP_JS__\";", with: String(decoding: PackageResources.dashboard_map_js, as: UTF8.self))
        var headers = HTTPFields()
        headers[.cacheControl] = "no-store"
        // Only the page's own inline script and style run, named by their hashes (no
        // 'unsafe-inline'); nothing may frame it; share tokens in its URL are never sent on.
        let script = Self.hash(of: html, between: "<script>", and: "</script>")
        let style = Self.hash(of: html, between: "<style>", and: "</style>")
        headers[.contentSecurityPolicy] =
            "default-src 'self'; script-src \(script); style-src \(style); img-src 'self' data: https: http:; "
            + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.init("X-Frame-Options")!] = "DENY"
        return APIResponse.json(.ok, Array(html.utf8), contentType: "text/html; charset=utf-8", headers: headers)
    }

    /// The CSP source (`'sha256-…'`, quoted) of the first element's text between `open` and `close`.
    static func hash(of html: String, between open: String, and close: String) -> String {
        guard let start = html.range(of: open), let end = html.range(of: close, range: start.upperBound..<html.endIndex) else {
            return "'none'"
        }
        let digest = SHA256.hash(data: Array(html[start.upperBound..<end.lowerBound].utf8))
        return "'sha256-" + Data(digest).base64EncodedString() + "'"
    }

    func history(_ install: UUID, _ params: Parameters, _ scope: ViewerScope) async throws(StoreError) -> Response {
        let nowMs = WireTimestamp(now()).millis
        var q: HistoryQuery
        switch HistoryQuery.parse(params, nowMillis: nowMs) {
        case .failure(let e): return ReadController.badParameter(e.name, e.expected)
        case .success(let parsed): q = parsed
        }
        if let start = scope.windowStart(nowMillis: nowMs) { q.from = max(q.from, start) }
        // A coarsened share (XR-4) coarsens the raw fixes first, and everything else — bounds, the
        // zoom a `fit=` picks, the simplification and `tolerance_m` — is computed from the
        // coarsened points only, so no figure depends on a precise position. The overview tiers
        // are built from precise positions, so it never reads them: `overview` answers like `exact`.
        // A share with hours of the day checks every fix, which the overview tiers cannot: also `exact`.
        let coarsening = scope.coarsening
        let source = (coarsening != nil || scope.rules.filtersEachFix) && q.source == .overview ? .exact : q.source
        var answer = HistoryAnswer(source: source)
        switch source {
        case .raw, .exact:
            var points = try await history.trackPoints(installId: install, fromMillis: q.from, toMillis: q.to, limit: Self.maxPoints + 1)
            answer.truncated = points.count > Self.maxPoints
            if answer.truncated { points.removeLast() }
            if scope.rules.filtersEachFix { points.removeAll { !scope.admits(millis: $0.millis, nowMillis: nowMs) } }
            answer.rawCount = points.count
            if let coarsening { points = points.map(coarsening.point) }
            answer.bounds = TrackBounds(points)
            if source == .exact {
                let zoom = q.zoom(for: answer.bounds)
                answer.zoom = zoom
                let halfPixel = TrackOverview.halfPixelMeters(level: zoom, latitude: points.first?.latitude ?? 0)
                // Radial pass + DP at half a pixel: every fix within one pixel of the line.
                points = TrackSimplifier(toleranceMeters: halfPixel).simplify(points)
                answer.toleranceMeters = 2 * halfPixel
            }
            answer.points = points
        case .overview:
            let query = q
            let slice = try await history.overview(installId: install, fromMillis: q.from, toMillis: q.to) { bounds in
                min(query.zoom(for: bounds), TrackOverview.maxLevel)
            }
            let zoom = q.zoom(for: slice.bounds)
            let latitude = slice.points.first?.latitude ?? 0
            let halfPixel = TrackOverview.halfPixelMeters(level: zoom, latitude: latitude)
            // The tier is within half a pixel at its level; this pass adds at most half a pixel at `zoom`.
            answer.points = TrackSimplifier(toleranceMeters: halfPixel / 2).simplify(slice.points)
            answer.toleranceMeters = TrackOverview.halfPixelMeters(level: slice.level, latitude: latitude) + halfPixel
            answer.zoom = zoom
            answer.level = slice.level
            answer.rawCount = slice.rawCount
            answer.bounds = slice.bounds
        }
        return APIResponse.json(.ok, answer.json(install))
    }
}
