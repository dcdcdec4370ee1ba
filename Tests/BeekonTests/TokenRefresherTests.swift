@testable import Beekon
import BeekonTesting
import Foundation
import Testing

@Suite("Token refresher (AU-2..8)")
struct TokenRefresherTests {
    @Test func proactiveRefreshFiresExactlyAtExpiryMinusSkew() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(tokenAnswer(#"{"access_token":"new-access-1","expires_in":3600}"#))
        let r = await h.refresher(authRecipe(expiresAt: h.epoch(3600)))
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(3539))
        #expect(await h.transport.token.requests.isEmpty, "not before expiresAt − skew")
        #expect(h.clock.sleeperCount == 1)
        h.clock.advance(by: .seconds(1))
        await h.transport.token.waitForRequests(1)
        let change = await h.changes.stream().first { _ in true }
        #expect(change?.accessToken == "new-access-1")
        #expect(change?.expiresAt == h.clock.now().addingTimeInterval(3600))
        #expect(await r.header == "Bearer new-access-1")
        // The next proactive refresh is armed for the new expiry − skew.
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(3539))
        #expect(await h.transport.token.requests.count == 1)
        h.clock.advance(by: .seconds(1))
        await h.transport.token.waitForRequests(2)
        await r.shutdown()
    }

    @Test func dueTokenIsRefreshedBeforeASend() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(tokenAnswer(#"{"access_token":"fresh"}"#))
        let r = await h.refresher(authRecipe(expiresAt: h.epoch(30)))  // already inside the skew margin
        #expect(await r.authorization() == .proceed(authorization: "Bearer fresh"))
        #expect(await h.transport.token.requests.count == 1)
        #expect(await r.authorization() == .proceed(authorization: "Bearer fresh"), "no expiry in the answer: no more refreshes")
        #expect(await h.transport.token.requests.count == 1)
        await r.shutdown()
    }

    enum Answer: Sendable, CustomStringConvertible {
        case status(Int)
        case body(Int, String)
        case timeout, network
        var result: Result<HTTPResponse, HTTPTransportError> {
            switch self {
            case .status(let s): return .success(HTTPResponse(status: s))
            case .body(let s, let b): return tokenAnswer(b, status: s)
            case .timeout: return .failure(.timeout)
            case .network: return .failure(.network("connection refused"))
            }
        }
        var description: String {
            switch self {
            case .status(let s): return "HTTP \(s)"
            case .body(let s, let b): return "HTTP \(s) \(b)"
            case .timeout: return "timeout"
            case .network: return "network"
            }
        }
    }

    /// AU-5, every row.
    @Test(arguments: [
        (Answer.body(200, #"{"access_token":"t2"}"#), TokenRefresher.RefreshResult.refreshed),
        (.body(201, #"{"token":"t2"}"#), .refreshed),
        (.body(200, #"{"expires_in":3600}"#), .dead),  // 2xx without a token
        (.body(200, "not json"), .dead),
        (.status(204), .dead),
        (.status(301), .dead), (.status(302), .dead), (.status(307), .dead),  // 3xx
        (.status(400), .dead), (.status(401), .dead), (.status(403), .dead), (.status(404), .dead), (.status(410), .dead),
        (.status(408), .transient(until: nil)), (.status(429), .transient(until: nil)),
        (.status(500), .transient(until: nil)), (.status(502), .transient(until: nil)), (.status(503), .transient(until: nil)),
        (.timeout, .transient(until: nil)), (.network, .transient(until: nil)),
    ])
    func outcomeTable(answer: Answer, expected: TokenRefresher.RefreshResult) async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(answer.result)
        let r = await h.refresher(authRecipe())
        #expect(await r.refresh() == expected)
        switch expected {
        case .refreshed:
            #expect(await r.header == "Bearer t2")
        case .dead:
            #expect(await r.isDead)
            #expect(await r.authorization() == .dead)
            #expect(await r.refresh() == .dead)
            #expect(await h.transport.token.requests.count == 1, "dead credentials: no more refresh calls")
        case .transient:
            #expect(await r.consecutiveFailures == 1)
            #expect(await r.header == "Bearer seed-access-AAAA", "the old token is kept")
            #expect(await !r.isDead)
        }
    }

    @Test func breakerOpensAfterThreeFailuresAndBacksOffExponentially() async throws {
        let h = RefresherHarness()
        await h.transport.token.setFallback(.success(HTTPResponse(status: 503)))
        let r = await h.refresher(authRecipe())
        #expect(await r.refresh() == .transient(until: nil))
        #expect(await r.refresh() == .transient(until: nil))
        let open1 = h.clock.now().addingTimeInterval(30)
        #expect(await r.refresh() == .transient(until: open1), "3rd failure opens the breaker for 30 s")
        #expect(await r.refresh() == .transient(until: open1), "open: no call")
        #expect(await h.transport.token.requests.count == 3)
        h.clock.advance(by: .seconds(29))
        _ = await r.refresh()
        #expect(await h.transport.token.requests.count == 3)
        h.clock.advance(by: .seconds(1))
        let open2 = h.clock.now().addingTimeInterval(60)
        #expect(await r.refresh() == .transient(until: open2), "a failed trial doubles the period")
        #expect(await h.transport.token.requests.count == 4)
        h.clock.advance(by: .seconds(60))
        #expect(await r.refresh() == .transient(until: h.clock.now().addingTimeInterval(120)))
        #expect(TokenRefresher.breakerDelay(failures: 3) == 30 && TokenRefresher.breakerDelay(failures: 6) == 240)
        #expect(TokenRefresher.breakerDelay(failures: 40) == 1800, "capped at 30 min")
        // A success closes it.
        await h.transport.token.setFallback(tokenAnswer(#"{"access_token":"ok"}"#))
        h.clock.advance(by: .seconds(120))
        #expect(await r.refresh() == .refreshed)
        #expect(await r.consecutiveFailures == 0)
        #expect(await r.breakerUntil == nil)
    }

    @Test func breakerAlsoPacesTheProactiveTimer() async throws {
        let h = RefresherHarness()
        await h.transport.token.setFallback(.success(HTTPResponse(status: 500)))
        let r = await h.refresher(authRecipe(expiresAt: h.epoch(60)))  // due now
        for n in 1...3 {
            await h.transport.token.waitForRequests(n)
            await h.clock.waitForSleepers(1)
            #expect(await h.transport.token.requests.count == n)
            h.clock.advance(by: .seconds(30))  // closed: retry after 30 s; 3rd failure: breaker 30 s
        }
        await h.transport.token.waitForRequests(4)
        await h.clock.waitForSleepers(1)
        h.clock.advance(by: .seconds(59))
        #expect(await h.transport.token.requests.count == 4, "breaker now 60 s")
        h.clock.advance(by: .seconds(1))
        await h.transport.token.waitForRequests(5)
        await r.shutdown()
    }

    @Test func refreshTokenRotationIsUsedByTheNextRefresh() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(
            tokenAnswer(#"{"access_token":"a2","refresh_token":"rotated-r2"}"#),
            tokenAnswer(#"{"access_token":"a3"}"#),
            tokenAnswer(#"{"access_token":"a4"}"#))
        let r = await h.refresher(authRecipe())
        #expect(await r.refresh() == .refreshed)
        #expect(await r.refresh() == .refreshed)
        #expect(await r.refresh() == .refreshed)
        let bodies = await h.transport.token.requests.map(\.text)
        #expect(bodies[0].contains("refresh_token=seed-refresh-RRRR"))
        #expect(bodies[1].contains("refresh_token=rotated-r2"), "rotation: the new refresh token is sent")
        #expect(bodies[2].contains("refresh_token=rotated-r2"), "no refresh token in the answer: the old one is kept")
        let auth = await h.transport.token.requests.map { $0.headers["Authorization"] }
        #expect(auth == ["Bearer seed-access-AAAA", "Bearer a2", "Bearer a3"])
        #expect(await r.currentTokens.refreshToken == "rotated-r2")
    }

    /// Found by scripts/chaos.sh (disk full under the agent's vault): a rotated refresh token
    /// kept only in memory was lost with the process, the restart presented the retired one
    /// after its successor had been used, and the server revoked the chain (dead credentials).
    @Test func aRotatedRefreshTokenIsAdoptedOnlyOnceItIsStored() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(
            tokenAnswer(#"{"access_token":"a2","refresh_token":"r2"}"#),
            tokenAnswer(#"{"access_token":"a3","refresh_token":"r3"}"#))
        let r = await h.refresher(authRecipe())
        h.secrets.refuseSaves(true)
        #expect(await r.refresh() == .transient(until: nil), "an unstorable rotation is a failed refresh")
        #expect(await r.currentTokens.refreshToken == "seed-refresh-RRRR", "the unstored rotation is not adopted")
        #expect(await r.header == "Bearer seed-access-AAAA")
        h.secrets.refuseSaves(false)
        #expect(await r.refresh() == .refreshed)
        let bodies = await h.transport.token.requests.map(\.text)
        #expect(bodies.count == 2)
        #expect(bodies[1].contains("refresh_token=seed-refresh-RRRR"), "repeated with the token the server still honours")
        await r.shutdown()
        // A restart reads the vault: the stored rotation.
        let restarted = await h.refresher(authRecipe())
        #expect(await restarted.currentTokens.refreshToken == "r3")
        #expect(await restarted.header == "Bearer a3")
    }

    @Test func formBodyIsTemplatedAndPercentEncoded() async throws {
        var config = authRecipe(refresh: "r+/=&é x")
        config.refreshPayload["note"] = "a b&c=d/é*-._~"
        config.refreshPayload["both"] = "{accessToken}:{refreshToken}"
        config.refreshHeaders["X-Refresh"] = "rt {refreshToken}"
        let request = RefreshExchange.request(
            url: tokenURL, config: config,
            tokens: TokenSet(accessToken: "acc", refreshToken: "r+/=&é x"))
        #expect(request.method == "POST" && request.url == tokenURL)
        #expect(request.timeout == .seconds(15), "AU-4: 15 s")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.headers["Authorization"] == "Bearer acc")
        #expect(request.headers["X-Refresh"] == "rt r+/=&é x")
        #expect(
            request.text == "both=acc%3Ar%2B%2F%3D%26%C3%A9+x&grant_type=refresh_token"
                + "&note=a+b%26c%3Dd%2F%C3%A9*-._%7E&refresh_token=r%2B%2F%3D%26%C3%A9+x")
    }

    @Test func jsonBodyIsTemplated() throws {
        let config = authRecipe(format: .json)
        let request = RefreshExchange.request(url: tokenURL, config: config, tokens: TokenSet(accessToken: "a", refreshToken: "r/1\"x"))
        #expect(request.headers["Content-Type"] == "application/json")
        let fields = try JSONDecoder().decode([String: String].self, from: request.body)
        #expect(fields == ["grant_type": "refresh_token", "refresh_token": "r/1\"x"])
    }

    @Test func templatesNamingAMissingTokenAreLeftOut() {
        let config = authRecipe()
        let request = RefreshExchange.request(url: tokenURL, config: config, tokens: TokenSet(accessToken: nil, refreshToken: "r"))
        #expect(request.headers["Authorization"] == nil, "no access token: no 'Bearer ' header")
        #expect(request.text == "grant_type=refresh_token&refresh_token=r")
    }

    @Test func responseParsing() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let current = TokenSet(accessToken: "old", refreshToken: "r-old")
        func p(_ json: String, _ mapping: AuthConfig.ResponseMapping? = nil) -> TokenSet? {
            RefreshExchange.parse(Data(json.utf8), current: current, mapping: mapping, now: now)
        }
        #expect(p(#"{"access_token":"a","expires_in":3600}"#) == TokenSet(accessToken: "a", refreshToken: "r-old", expiresAt: 1_003_600))
        #expect(p(#"{"accessToken":"b","expiresIn":"1800"}"#)?.expiresAt == 1_001_800, "numeric string, relative")
        #expect(p(#"{"token":"c","expires_at":"2000000"}"#)?.expiresAt == 2_000_000, "numeric string, absolute")
        #expect(p(#"{"token":"c","expiresAt":2000000.5}"#)?.expiresAt == 2_000_000.5)
        #expect(p(#"{"access_token":"first","accessToken":"second","token":"third"}"#)?.accessToken == "first", "AU-4 order")
        #expect(p(#"{"accessToken":"second","token":"third"}"#)?.accessToken == "second")
        #expect(p(#"{"access_token":"a","refreshToken":"r-new"}"#)?.refreshToken == "r-new")
        #expect(p(#"{"access_token":"a","expires_in":"soon"}"#)?.expiresAt == nil, "unparseable expiry: reactive only")
        #expect(p(#"{"access_token":""}"#) == nil)
        #expect(p(#"{"access_token":42}"#) == nil)
        #expect(p(#"["access_token"]"#) == nil)
        let mapping = AuthConfig.ResponseMapping(accessToken: "data.auth.tok", refreshToken: "data.auth.rt", expiresIn: "data.auth.ttl")
        let mapped = p(#"{"access_token":"ignored","data":{"auth":{"tok":"m","rt":"mr","ttl":"60"}}}"#, mapping)
        #expect(mapped == TokenSet(accessToken: "m", refreshToken: "mr", expiresAt: 1_000_060))
        #expect(p(#"{"access_token":"fallback"}"#, mapping)?.accessToken == "fallback", "mapping miss: standard keys")
        #expect(p(#"{"items":[{"t":"x"}]}"#, .init(accessToken: "items.0.t"))?.accessToken == "x")
        #expect(p(#"{"d":{"exp":1234}, "token":"x"}"#, .init(expiresAt: "d.exp"))?.expiresAt == 1234)
    }

    @Test func rawStrategyAttachesTheBareToken() async {
        let h = RefresherHarness()
        let r = await h.refresher(authRecipe(strategy: .raw))
        #expect(await r.authorization() == .proceed(authorization: "seed-access-AAAA"))
    }

    @Test func fiftyConcurrentUnauthorizedCallersShareOneRefresh() async throws {
        let h = RefresherHarness()
        await h.transport.token.hold()
        await h.transport.token.enqueue(tokenAnswer(#"{"access_token":"shared-new"}"#))
        let r = await h.refresher(authRecipe())
        let results = await withTaskGroup(of: TokenRefresher.Decision.self) { group in
            for _ in 0..<50 {
                group.addTask { await r.unauthorized(rejected: "Bearer seed-access-AAAA") }
            }
            group.addTask {
                await h.transport.token.waitForRequests(1)
                await h.transport.token.release()
                return .proceed(authorization: "Bearer shared-new")
            }
            var all: [TokenRefresher.Decision] = []
            for await d in group { all.append(d) }
            return all
        }
        #expect(results.count == 51)
        #expect(results.allSatisfy { $0 == .proceed(authorization: "Bearer shared-new") })
        #expect(await h.transport.token.requests.count == 1, "exactly one refresh call")
    }

    @Test func seedIsAdoptedOnceThenTheVaultWins() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(tokenAnswer(#"{"access_token":"live-2","refresh_token":"live-r2"}"#))
        let first = await h.refresher(authRecipe())
        #expect(await first.refresh() == .refreshed)
        await first.shutdown()
        // Same seed again (e.g. the app passes its original tokens on every launch): not re-adopted.
        let second = await h.refresher(authRecipe())
        #expect(await second.header == "Bearer live-2")
        // A different seed: re-seeded.
        let third = await h.refresher(authRecipe(access: "other-seed", refresh: "other-r"))
        #expect(await third.header == "Bearer other-seed")
        // No seed tokens at all (a persisted config): the vault is used.
        let fourth = await h.refresher(authRecipe(access: nil, refresh: nil))
        #expect(await fourth.header == "Bearer other-seed")
        let vault = String(decoding: h.secrets.contents ?? Data(), as: UTF8.self)
        #expect(!vault.contains("seed-access-AAAA") && !vault.contains("seed-refresh-RRRR"), "only a fingerprint of the seed")
    }

    @Test func unreadableVaultMeansNoTokensAndNoCrash() async {
        let h = RefresherHarness()
        h.secrets.corrupt()
        let r = await h.refresher(authRecipe(access: nil, refresh: nil))
        #expect(await r.header == nil)
        #expect(h.logs.text.contains("could not be read"))
    }

    @Test func tokensNeverAppearInLogsOrDescriptions() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(
            .failure(.network("bad request to http://x/?t=seed-refresh-RRRR")), .success(HTTPResponse(status: 500)),
            tokenAnswer(#"{"access_token":"secret-new-ZZZZ","refresh_token":"secret-r-YYYY"}"#),
            .success(HTTPResponse(status: 400)))
        let r = await h.refresher(authRecipe())
        for _ in 0..<4 { _ = await r.refresh() }
        let change = AuthChange(accessToken: "secret-new-ZZZZ", refreshToken: "secret-r-YYYY", expiresAt: nil)
        let config = SyncConfig(url: loopbackURL, auth: authRecipe())
        let live = await r.currentTokens
        let texts = [
            h.logs.text, "\(change)", String(reflecting: change), "\(config)", String(reflecting: config),
            "\(authRecipe())", "\(live)",
        ]
        for text in texts {
            for secret in ["seed-access-AAAA", "seed-refresh-RRRR", "secret-new-ZZZZ", "secret-r-YYYY"] {
                #expect(!text.contains(secret), "\(secret) leaked")
            }
        }
        #expect(h.logs.text.contains("token refreshed") && h.logs.text.contains("refresh credentials rejected"))
        let encoded = String(decoding: try JSONEncoder().encode(config), as: UTF8.self)
        #expect(!encoded.contains("seed-access-AAAA") && !encoded.contains("seed-refresh-RRRR"), "Codable never writes the seed")
        #expect(try JSONDecoder().decode(SyncConfig.self, from: Data(encoded.utf8)).auth?.refreshUrl == tokenURL)
    }

    @Test func validation() {
        #expect(throws: BeekonError.self) { try AuthConfig(refreshUrl: URL(string: "http://auth.example.com/t")!).validate() }
        #expect(throws: BeekonError.self) { try AuthConfig(skewMarginSeconds: -1).validate() }
        #expect(throws: BeekonError.self) {
            try SyncConfig(url: loopbackURL, auth: AuthConfig(refreshUrl: URL(string: "ftp://127.0.0.1/t")!)).validate()
        }
        #expect(throws: Never.self) { try AuthConfig(refreshUrl: URL(string: "https://auth.example.com/t")!).validate() }
        #expect(throws: Never.self) { try AuthConfig(refreshUrl: URL(string: "http://localhost:8080/t")!).validate() }
        let d = AuthConfig()
        #expect(d.strategy == .bearer && d.refreshBodyFormat == .form && d.skewMarginSeconds == 60)
        #expect(d.refreshHeaders == ["Authorization": "Bearer {accessToken}"] && d.refreshPayload.isEmpty)
        #expect(d.refreshUrl == nil && d.responseMapping == nil && d.expiresAt == nil)
    }
}
