import BeekonIngest
import BeekonTesting
import Foundation
import Testing

extension Ingest {
    /// Issue 52: refresh-token reuse detection that cannot be turned against the holder. A
    /// retired token presented again revokes its whole chain; the grace for a lost answer
    /// admits a replay of the superseded token within ``TokenService/replayWindowSeconds`` of
    /// its rotation, which retires the answer it replaces.
    @Suite struct RefreshReuse {
        static func service(_ store: any LocationStore, _ clock: TestClock) async throws -> TokenService {
            let tokens = TokenService(store: store.tokens, accessTTLSeconds: 60, refreshTTLSeconds: 86_400, now: { clock.now() })
            try await tokens.loadKey()
            return tokens
        }

        /// Whether refreshing `token` is refused.
        static func refused(_ tokens: TokenService, _ token: String) async -> Bool {
            do {
                _ = try await tokens.refresh(token)
                return false
            } catch {
                return true
            }
        }

        /// The attack of issue 52: the victim refreshed R1 → R2 and has not used R2 yet; an
        /// attacker with a stolen R1 presents it and gets R2′ under the "lost answer" rule.
        @Test(
            "issue 52: a stolen, superseded refresh token cannot take the chain over; the victim's next refresh ends it for both",
            arguments: Backend.all)
        func stolenSupersededTokenCannotTakeOver(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let clock = TestClock()
                let tokens = try await Self.service(store, clock)
                let r1 = try await tokens.issue(subject: "victim").refreshToken
                let r2 = try await tokens.refresh(r1).refreshToken
                clock.advance(by: .seconds(5))
                // The attacker's replay of R1 (a lost answer, as far as the server can tell).
                let stolen = try? await tokens.refresh(r1)
                // The victim's R2 is refused, and its presentation ends the attacker's chain too.
                #expect(await Self.refused(tokens, r2), "the victim's own token was refused…")
                if let stolen {
                    #expect(await Self.refused(tokens, stolen.refreshToken), "…but the attacker refreshes on as the victim")
                }
                #expect(await Self.refused(tokens, r1))
            }
        }

        @Test(
            "issue 52: a lost answer's token may be presented again within the window, each replay retiring the answer before; a retired answer presented revokes the chain",
            arguments: Backend.all)
        func lostAnswerGraceRetiresEachEarlierAnswer(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let clock = TestClock()
                let tokens = try await Self.service(store, clock)
                let r1 = try await tokens.issue(subject: "phone").refreshToken
                let lost = try await tokens.refresh(r1)  // the answer is lost
                clock.advance(by: .seconds(30))
                let lostAgain = try await tokens.refresh(r1)  // and the replay's answer too
                clock.advance(by: .seconds(30))
                let replayed = try await tokens.refresh(r1)
                // Whoever presents an answer a later replay retired ends the chain for every holder.
                #expect(await Self.refused(tokens, lostAgain.refreshToken))
                #expect(await Self.refused(tokens, replayed.refreshToken))
                #expect(await Self.refused(tokens, lost.refreshToken))
                #expect(await Self.refused(tokens, r1))
            }
        }

        @Test("issue 52: the replay window is counted from the first rotation, not from the last replay", arguments: Backend.all)
        func replayWindowDoesNotSlide(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let clock = TestClock()
                let tokens = try await Self.service(store, clock)
                let r1 = try await tokens.issue(subject: "phone").refreshToken
                _ = try await tokens.refresh(r1)
                clock.advance(by: .seconds(TokenService.replayWindowSeconds - 10))
                let replayed = try await tokens.refresh(r1)
                clock.advance(by: .seconds(20))
                #expect(await Self.refused(tokens, r1), "a replay extended the window")
                #expect(await Self.refused(tokens, replayed.refreshToken))
            }
        }

        @Test("issue 52: a lost answer's token, replayed, goes on rotating normally", arguments: Backend.all)
        func replayedChainGoesOn(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let clock = TestClock()
                let tokens = try await Self.service(store, clock)
                let r1 = try await tokens.issue(subject: "phone").refreshToken
                _ = try await tokens.refresh(r1)  // the answer is lost
                var current = try await tokens.refresh(r1).refreshToken
                for _ in 0..<3 {
                    clock.advance(by: .seconds(900))
                    current = try await tokens.refresh(current).refreshToken
                }
                #expect(!(await Self.refused(tokens, current)))
            }
        }

        @Test(
            "issue 52: a superseded token presented after the window revokes the chain, its unused successor included",
            arguments: Backend.all)
        func lateReplayRevokesTheChain(_ backend: Backend) async throws {
            try await withStore(backend) { store in
                let clock = TestClock()
                let tokens = try await Self.service(store, clock)
                let r1 = try await tokens.issue(subject: "phone").refreshToken
                let r2 = try await tokens.refresh(r1).refreshToken
                clock.advance(by: .seconds(TokenService.replayWindowSeconds + 1))
                #expect(await Self.refused(tokens, r1))
                #expect(await Self.refused(tokens, r2), "the chain outlived a late replay of a superseded token")
            }
        }
    }
}
