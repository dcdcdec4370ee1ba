import BeekonWire
import Foundation

extension AuthConfig {
    /// The refresh recipe of a `beekon-ingest` server (or any OAuth-style token endpoint):
    /// `POST tokenURL` with `grant_type=refresh_token&refresh_token={refreshToken}` as a form.
    /// Without seed tokens the SDK uses the tokens it keeps in its vault (AU-9), so this is
    /// what an app passes on every launch after ``Beekon/enroll(code:tokenURL:)`` succeeded once.
    public static func refreshing(at tokenURL: URL) -> AuthConfig {
        AuthConfig(refreshUrl: tokenURL, refreshPayload: WireTokenRequest.refresh(refreshToken: "{refreshToken}").fields)
    }
}

extension Beekon {
    /// Exchanges an enrollment code for this install's first access and refresh tokens
    /// (a code an admin created on the server with `POST /v1/enrollments`), bound on the
    /// server to this install's ``installID()``.
    ///
    /// Call it once, on first launch, and configure sync with the answer: it is
    /// ``AuthConfig/refreshing(at:)`` seeded with the new tokens. From then on the SDK keeps,
    /// refreshes and rotates the tokens itself (AU-9); later launches pass
    /// `AuthConfig.refreshing(at: tokenURL)` without tokens. An install enrols once, except
    /// with a code created for the same person (a restored phone; see
    /// ``setReenrollmentHandler(_:)``, which does it for you).
    ///
    /// ```swift
    /// let auth = try await beekon.enroll(code: codeFromMyBackend, tokenURL: URL(string: "https://ingest.example.com/oauth/token")!)
    /// try await beekon.configure(config.with(sync: SyncConfig(url: ingestURL, auth: auth)))
    /// ```
    ///
    /// - Parameters:
    ///   - code: the enrollment code (never logged).
    ///   - tokenURL: the server's token endpoint (https, or http to a loopback host).
    /// - Returns: the auth recipe with the seed tokens and their expiry.
    /// - Throws: ``BeekonError/invalidConfiguration(_:)`` for a bad URL or an empty code;
    ///   ``BeekonError/enrollmentFailed(_:)`` when the server refused the code (ask for a new
    ///   one) or could not be reached (retry later).
    public func enroll(code: String, tokenURL: URL) async throws(BeekonError) -> AuthConfig {
        let tokens = try await exchangeEnrollment(code: code, tokenURL: tokenURL)
        var auth = AuthConfig.refreshing(at: tokenURL)
        auth.accessToken = tokens.accessToken
        auth.refreshToken = tokens.refreshToken
        auth.expiresAt = tokens.expiresAt
        logger.info("auth: enrolled this install")
        return auth
    }

    /// Sets who answers when the server refuses this install's credentials for good:
    /// the refresh token is unknown, expired or revoked with its chain — a phone restored from
    /// a backup (the install id came back, the Keychain's tokens did not), an app idle for
    /// longer than the refresh token lives, a stolen token detected. The SDK then asks
    /// `handler` for a fresh enrollment code, e.g. from the app's backend for the signed-in
    /// person (an enroller key on the server creates one), exchanges it for this install at the
    /// token endpoint of its ``AuthConfig``, and uploads on with the new tokens: the install
    /// keeps its id and its history. Return nil to leave uploads paused (rows are kept).
    ///
    /// A code re-enrols a known install only when it was created for the person the install
    /// was enrolled for; otherwise the server refuses it, uploads stay paused and
    /// ``resetInstallID()`` starts over as a new install.
    ///
    /// ```swift
    /// await beekon.setReenrollmentHandler { try? await myBackend.enrollmentCode(for: currentUser) }
    /// ```
    public func setReenrollmentHandler(_ handler: (@Sendable () async -> String?)?) {
        reenrollmentHandler = handler
    }

    /// Forgets this install's id and its tokens, and creates a new id: for an
    /// install whose old id cannot be enrolled again (revoked, or held by a credential of
    /// another person). Its history on the server stays under the old id. Enrol again with
    /// ``enroll(code:tokenURL:)`` and configure sync with the answer (the sync engine stops until the
    /// next `configure` or `sync`). Rows not yet uploaded are sent under the new id.
    /// - Returns: the new install id.
    @discardableResult
    public func resetInstallID() async throws(BeekonError) -> UUID {
        let store = try await ready()
        if let old = syncEngine {
            await old.shutdown()
            syncEngine = nil
        }
        let id = try await store.resetInstallID(makeID: deps.makeID)
        do {
            try deps.effectiveSecretStore.delete()
        } catch {
            logger.warning("auth: the token vault could not be cleared", metadata: ["error": "\(error)"])
        }
        logger.notice("install id reset: enrol again")
        return id
    }

    /// The host's answer to dead credentials, exchanged for this install's new tokens; nil when
    /// there is no handler, it gave no code, or the server refused it (logged).
    func reenroll(tokenURL: URL) async -> TokenSet? {
        guard let handler = reenrollmentHandler else { return nil }
        guard let code = await handler() else {
            logger.notice("auth: credentials are dead and the re-enrollment handler gave no code")
            return nil
        }
        do {
            let tokens = try await exchangeEnrollment(code: code, tokenURL: tokenURL)
            logger.notice("auth: re-enrolled this install")
            return tokens
        } catch {
            logger.error("auth: re-enrollment failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// One enrollment exchange for this install at `tokenURL`: the tokens, or why not.
    func exchangeEnrollment(code: String, tokenURL: URL) async throws(BeekonError) -> TokenSet {
        try EndpointRule.check(tokenURL, field: "enroll(tokenURL:)")
        guard !code.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidConfiguration("enroll(code:) needs the enrollment code")
        }
        let install = try await installID()
        let request = HTTPRequest(
            url: tokenURL, method: "POST",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: WireTokenRequest.enrollment(code: code, installId: install).formEncoded(), timeout: RefreshExchange.timeout)
        let result: Result<HTTPResponse, HTTPTransportError>
        do {
            result = .success(try await (deps.transport ?? URLSessionTransport()).send(request))
        } catch {
            result = .failure(error)
        }
        let empty = TokenSet(accessToken: nil, refreshToken: nil, expiresAt: nil)
        switch RefreshExchange.classify(result, current: empty, mapping: nil, now: deps.authClock.now()) {
        case .adopt(let tokens):
            guard tokens.refreshToken != nil else {
                throw .enrollmentFailed("the server answered without a refresh token; is \(tokenURL.host ?? "it") a beekon-ingest server?")
            }
            return tokens
        case .dead(let status):
            throw .enrollmentFailed(
                "the server refused the code (HTTP \(status)): it is unknown, expired or used up, or this install is enrolled for another person or revoked; ask for a new code"
            )
        case .transient(let why):
            throw .enrollmentFailed("the server could not be reached (\(why)); retry later")
        }
    }
}
