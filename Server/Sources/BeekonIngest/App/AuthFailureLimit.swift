import BeekonPrimitives
import Foundation
import Hummingbird

/// A budget of failed credentials per client address (issue 50): `/oauth/token` answered about
/// 480 guesses of enrolment codes and refresh tokens a second, and floods of bad refresh and
/// share tokens slowed ingest for everyone. Each failure (a 401 anywhere, a refused
/// `/oauth/token` request) spends one unit of the address's budget, which refills at
/// `perMinute` a minute up to `perMinute`; an address with none left gets 429 with
/// `Retry-After` for the token route and for share tokens (``isGuarded(_:)``), before any
/// lookup. Valid API keys and access tokens (checked in memory) are never held back. Times are
/// the server's clock. Behind a reverse proxy every client has the proxy's address: limit there.
///
/// The 429 itself waits ``hold`` (1 s) before it is sent, as nginx's `limit_req` delays excess
/// requests: a flood from one address answered at once still took the CPU others needed (about
/// 5,600 refusals a second from four keep-alive connections; ingest p50 8.9× in `AT4`); held, it
/// gets one answer per connection per second, and its connections are bounded per address
/// (`--max-connections-per-client`).
final class AuthFailureLimit: Sendable {
    private struct Bucket {
        var spent: Double
        var at: Double
    }

    /// Failures an address may cause per minute (and at once).
    let perMinute: Int
    let now: @Sendable () -> Date
    private let buckets = Locked([String: Bucket]())
    /// Addresses remembered at most; past it, those whose budget has refilled are forgotten.
    static let addresses = 10_000

    /// How long an address past its budget waits for its 429.
    let hold: Duration
    /// Waits (injected: a test records the hold instead of waiting).
    let sleep: Sleeper

    /// A budget of `perMinute` (at least 1) failures a minute per address; refusals wait `hold`.
    init(
        perMinute: Int, hold: Duration = .seconds(1), now: @escaping @Sendable () -> Date,
        sleep: @escaping Sleeper = realSleep
    ) {
        self.perMinute = max(1, perMinute)
        self.hold = hold
        self.now = now
        self.sleep = sleep
    }

    private var rate: Double { Double(perMinute) / 60 }

    private func spent(_ b: Bucket, at t: Double) -> Double { max(0, b.spent - max(0, t - b.at) * rate) }

    /// Seconds until `address` may try again; nil when it has budget left.
    func retryAfter(_ address: String) -> Int? {
        let t = now().timeIntervalSince1970
        guard let b = buckets.withLock({ $0[address] }) else { return nil }
        let over = spent(b, at: t) - Double(perMinute - 1)
        return over > 0 ? max(1, Int((over / rate).rounded(.up))) : nil
    }

    /// Spends one unit of `address`'s budget.
    func charge(_ address: String) {
        let t = now().timeIntervalSince1970
        buckets.withLock { all in
            if all[address] == nil, all.count >= Self.addresses {
                all = all.filter { spent($0.value, at: t) > 0 }
                if all.count >= Self.addresses { all.removeAll(keepingCapacity: true) }
            }
            let left = all[address].map { spent($0, at: t) } ?? 0
            all[address] = Bucket(spent: left + 1, at: t)
        }
    }

    /// Whether a request is held back from an address past its budget: the token route, and
    /// any request carrying a share token (header or `share` parameter).
    static func isGuarded(_ request: Request) -> Bool {
        if request.uri.path == "/oauth/token" { return true }
        let token = Authenticator.bearer(request.headers) ?? request.uri.queryParameters["share"].map(String.init)
        return token?.hasPrefix(ShareService.tokenPrefix) ?? false
    }

    /// Whether an answer is a failed credential: any 401, or a refusal by the token route.
    static func isFailure(_ request: Request, _ status: HTTPResponse.Status) -> Bool {
        status == .unauthorized || (request.uri.path == "/oauth/token" && (400..<500).contains(status.code))
    }

    /// The 429 for `address` when it is past its budget, sent after ``hold``; nil when it has
    /// budget left. A client that goes away during the hold ends the wait with its task.
    func refusalAfterHold(_ address: String) async -> Response? {
        guard let wait = retryAfter(address) else { return nil }
        if hold > .zero { try? await sleep(hold) }
        return refusal(retryAfter: wait)
    }

    /// The 429 for an address past its budget.
    func refusal(retryAfter seconds: Int) -> Response {
        var headers = HTTPFields()
        headers[.retryAfter] = "\(seconds)"
        return APIResponse.error(
            .tooManyRequests, "rate_limited",
            "too many failed credentials from this address (--auth-failures-per-minute \(perMinute)); retry in \(seconds) s",
            headers: headers)
    }
}

/// ``AuthFailureLimit`` in front of every route, keyed by the connection's client address.
struct AuthFailureMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The budgets.
    let limit: AuthFailureLimit

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let address = ClientPresence.current?.address else { return try await next(request, context) }
        if AuthFailureLimit.isGuarded(request), let refused = await limit.refusalAfterHold(address) { return refused }
        let response = try await next(request, context)
        if AuthFailureLimit.isFailure(request, response.status) { limit.charge(address) }
        return response
    }
}
