@testable import Beekon
import BeekonPrimitives
import BeekonTesting
import Foundation
import Testing

/// Dead credentials ask the host for a fresh enrollment code (the refresher's
/// re-enrollment hook) before uploads stop.
@Suite("Token refresher: re-enrollment on dead credentials")
struct ReenrollmentTests {
    static let enrolled = TokenSet(accessToken: "reenrolled-access", refreshToken: "reenrolled-refresh", expiresAt: nil)

    @Test func deadRefreshAdoptsAndStoresTheHostsNewTokens() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(tokenAnswer(#"{"error":"invalid_grant"}"#, status: 400))
        let asked = Locked(0)
        let r = await h.refresher(authRecipe(expiresAt: h.epoch(10))) {
            asked.withLock { $0 += 1 }
            return Self.enrolled
        }
        #expect(await r.authorization() == .proceed(authorization: "Bearer reenrolled-access"))
        #expect(asked.value == 1)
        #expect(await r.currentTokens == Self.enrolled)
        let stored = try JSONDecoder().decode(TokenRefresher.VaultRecord.self, from: try #require(h.secrets.contents))
        #expect(stored.tokens == Self.enrolled && !stored.dead, "the new tokens are durable")
        // The next refresh presents the re-enrolled refresh token.
        await h.transport.token.enqueue(tokenAnswer(#"{"access_token":"next"}"#))
        #expect(await r.refresh() == .refreshed)
        let body = try #require(await h.transport.token.requests.last?.text)
        #expect(body.contains("refresh_token=reenrolled-refresh"))
        await r.shutdown()
    }

    @Test func noCodeFromTheHostLeavesTheCredentialsDeadAndARestartAsksAgain() async throws {
        let h = RefresherHarness()
        await h.transport.token.enqueue(tokenAnswer(#"{"error":"invalid_grant"}"#, status: 400))
        let r = await h.refresher(authRecipe(expiresAt: h.epoch(10))) { nil }
        #expect(await r.authorization() == .dead)
        await r.shutdown()
        // A later launch (the vault says dead): the host, now with a code, revives it without
        // a refresh request.
        let later = await h.refresher(authRecipe(expiresAt: h.epoch(10))) { Self.enrolled }
        #expect(await later.authorization() == .proceed(authorization: "Bearer reenrolled-access"))
        #expect(await h.transport.token.requests.count == 1)
        await later.shutdown()
    }
}
