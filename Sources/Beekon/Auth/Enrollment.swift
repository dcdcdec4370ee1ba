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
    /// `AuthConfig.refreshing(at: tokenURL)` without tokens. A device enrols once: enrolling
    /// again (even with a new code) is refused by the server.
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
            guard let refresh = tokens.refreshToken else {
                throw .enrollmentFailed("the server answered without a refresh token; is \(tokenURL.host ?? "it") a beekon-ingest server?")
            }
            var auth = AuthConfig.refreshing(at: tokenURL)
            auth.accessToken = tokens.accessToken
            auth.refreshToken = refresh
            auth.expiresAt = tokens.expiresAt
            logger.info("auth: enrolled this install")
            return auth
        case .dead(let status):
            throw .enrollmentFailed(
                "the server refused the code (HTTP \(status)): it is unknown, expired or used up, or this install is already enrolled or revoked; ask for a new code"
            )
        case .transient(let why):
            throw .enrollmentFailed("the server could not be reached (\(why)); retry later")
        }
    }
}
