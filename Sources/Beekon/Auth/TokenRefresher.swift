import BeekonWire
import Foundation
import Logging

/// Owns the live token set for uploads (AU-1..9): adopts the seed once, refreshes
/// proactively at `expiresAt − skewMarginSeconds` on the injected clock and reactively
/// on 401/403, shares one refresh among concurrent callers, stops for good on dead
/// credentials, and backs off with a circuit breaker after repeated transient failures.
/// Every change of the set is persisted to the `SecretStore` before it is used.
actor TokenRefresher {
    /// What an upload should do about authentication.
    enum Decision: Sendable, Equatable {
        /// Send, with this `Authorization` value (nil: no token to attach).
        case proceed(authorization: String?)
        /// Dead credentials: send nothing until `configure()` re-seeds.
        case dead
        /// No usable token right now (transient refresh failure): try again at `until`
        /// (the breaker's deadline), or after the engine's own backoff when nil.
        case wait(until: Date?)
    }

    /// What one refresh achieved (shared by every caller of a single flight).
    enum RefreshResult: Sendable, Equatable {
        case refreshed
        case dead
        case transient(until: Date?)
    }

    /// Breaker (AU-8): closed below this many consecutive failures.
    static let breakerThreshold = 3
    /// The breaker's first open period; it doubles with every further failure…
    static let breakerBase: Double = 30
    /// …up to this.
    static let breakerCap: Double = 1800
    /// While the breaker is closed, a failed proactive refresh is retried after this.
    static let closedRetrySeconds: Double = 30

    /// Asks the host for a fresh enrollment code and exchanges it (re-enrolment): new tokens for
    /// this install, or nil.
    typealias Reenroll = @Sendable () async -> TokenSet?

    let config: AuthConfig
    nonisolated let canRefresh: Bool
    private let reenroll: Reenroll?
    private let transport: any HTTPTransport
    /// The clock token lifetimes are measured on (`BeekonDependencies.authClock`).
    nonisolated let clock: any BeekonClock
    let secrets: any SecretStore
    private let changes: Broadcast<AuthChange>
    let logger: Logger

    var tokens = TokenSet()
    var seedFingerprint: String?
    var isDead = false
    private(set) var consecutiveFailures = 0
    private(set) var breakerUntil: Date?
    private var nextProactive: Date?
    private var inflight: Task<RefreshResult, Never>?
    private var timer: Task<Void, Never>?
    private var started = false
    var vaultLocked = false
    /// How long an upload waits while the vault is locked before trying again.
    static let lockedVaultRetrySeconds: Double = 60
    private var stopped = false

    init(
        config: AuthConfig, transport: any HTTPTransport, clock: any BeekonClock, secrets: any SecretStore,
        changes: Broadcast<AuthChange>, logger: Logger, reenroll: Reenroll? = nil
    ) {
        self.config = config
        self.reenroll = reenroll
        self.canRefresh = config.refreshUrl != nil
        self.transport = transport
        self.clock = clock
        self.secrets = secrets
        self.changes = changes
        self.logger = logger
    }

    // MARK: - Lifecycle

    /// Loads the vault, adopts the seed if it is new, and arms the proactive timer.
    /// While the vault is unreadable (a locked device, AU-9) nothing is adopted or
    /// written, so no rotated token is overwritten; the next upload tries again.
    func start() {
        guard !started else { return }
        vaultLocked = false
        let stored = loadRecord()
        if vaultLocked { return }
        started = true
        let fingerprint = RefreshExchange.seedFingerprint(config)
        if let fingerprint, stored?.seedFingerprint != fingerprint {
            // A seed the SDK has not seen (first run, or configure() with different tokens): adopt it.
            tokens = TokenSet(accessToken: config.accessToken, refreshToken: config.refreshToken, expiresAt: config.expiresAt)
            seedFingerprint = fingerprint
            isDead = false
            persist()
            logger.info("auth: adopted the seed tokens", metadata: ["reseed": "\(stored != nil)"])
        } else if let stored {
            tokens = stored.tokens
            seedFingerprint = stored.seedFingerprint
            isDead = stored.dead
            logger.debug("auth: using the persisted token set", metadata: ["dead": "\(isDead)"])
        } else {
            tokens = TokenSet(accessToken: nil, refreshToken: nil, expiresAt: config.expiresAt)
        }
        if !isDead, let exp = tokens.expiresAt { nextProactive = Date(timeIntervalSince1970: exp - config.skewMarginSeconds) }
        armTimer()
    }

    /// Stops the proactive timer; an in-flight refresh completes and is persisted.
    func shutdown() {
        stopped = true
        timer?.cancel()
        timer = nil
    }

    // MARK: - For the upload path

    /// The `Authorization` value for the next upload, refreshing first when the token is
    /// missing or due (`expiresAt − skew` passed) — the proactive path as seen by a send.
    func authorization() async -> Decision {
        start()
        if !started { return .wait(until: clock.now().addingTimeInterval(Self.lockedVaultRetrySeconds)) }
        if isDead, await refresh() != .refreshed { return .dead }
        if canRefresh && isDue(clock.now()) {
            switch await refresh() {
            case .refreshed: break
            case .dead: return .dead
            case .transient(let until):
                // Keep using a token that has not actually expired yet.
                if tokens.accessToken == nil || isExpired(clock.now()) { return .wait(until: until) }
            }
        }
        return .proceed(authorization: header)
    }

    /// A 401/403 answered an upload sent with `rejected`: refresh once (or join the refresh
    /// already running, or use a token that replaced `rejected` meanwhile) — AU-6/AU-7.
    func unauthorized(rejected: String?) async -> Decision {
        start()
        if !started { return .wait(until: clock.now().addingTimeInterval(Self.lockedVaultRetrySeconds)) }
        if isDead { return .dead }
        guard canRefresh else { return .proceed(authorization: header) }
        if let current = header, current != rejected { return .proceed(authorization: current) }
        switch await refresh() {
        case .refreshed: return .proceed(authorization: header)
        case .dead: return .dead
        case .transient(let until): return .wait(until: until)
        }
    }

    /// The `Authorization` value of the current access token (AU-2 strategy).
    var header: String? {
        guard let t = tokens.accessToken, !t.isEmpty else { return nil }
        switch config.strategy {
        case .bearer: return "Bearer \(t)"
        case .raw: return t
        }
    }

    /// The live set (for tests and the vault; never logged).
    var currentTokens: TokenSet { tokens }

    // MARK: - Refresh (single flight)

    /// Refreshes now, or joins the refresh in flight (AU-7). Honours dead credentials and
    /// an open breaker without touching the network.
    func refresh() async -> RefreshResult {
        if let inflight { return await inflight.value }
        if isDead {
            // Dead credentials (persisted from an earlier run): only a re-enrollment revives them.
            guard reenroll != nil else { return .dead }
            let task = Task { await self.revive() }
            inflight = task
            return await task.value
        }
        guard let url = config.refreshUrl else { return .transient(until: nil) }
        if let until = breakerUntil, clock.now() < until { return .transient(until: until) }
        let request = RefreshExchange.request(url: url, config: config, tokens: tokens)
        let task = Task { await self.perform(request) }
        inflight = task
        return await task.value
    }

    private func perform(_ request: HTTPRequest) async -> RefreshResult {
        let result: Result<HTTPResponse, HTTPTransportError>
        do { result = .success(try await transport.send(request)) } catch { result = .failure(error) }
        defer { inflight = nil }
        let now = clock.now()
        switch RefreshExchange.classify(result, current: tokens, mapping: config.responseMapping, now: now) {
        case .adopt(let new):
            let rotated = new.refreshToken != tokens.refreshToken
            // A rotated refresh token is used only once it is durable. Were it kept in memory
            // only, a restart would present the retired token after its successor had been
            // used, and a rotating server revokes the whole chain. Not adopted, the refresh
            // counts as failed and is repeated with the current token, which the server still
            // accepts because its successor was never used (beekon-ingest: within 120 s of the
            // rotation; after that the chain ends and a re-enrollment handler is asked).
            if rotated, let failure = save(VaultRecord(tokens: new, seedFingerprint: seedFingerprint, dead: isDead)) {
                return transientFailure("the refreshed tokens could not be stored (\(failure)); keeping the current ones", now: now)
            }
            takeUp(new)
            if !rotated { persist() }
            logger.info(
                "auth: token refreshed",
                metadata: [
                    "expires_at": "\(new.expiryDate.map { "\(WireTimestamp($0))" } ?? "-")",
                    "rotated_refresh_token": "\(rotated)",
                ])
            return .refreshed
        case .dead(let status):
            logger.error(
                "auth: refresh credentials rejected",
                metadata: ["status": "\(status)", "re-enrollment": "\(reenroll != nil ? "asked" : "none")"])
            return await revive(clearing: false)
        case .transient(let why):
            return transientFailure(why, now: now)
        }
    }

    /// Re-enrols through the host and adopts the new tokens, or declares the
    /// credentials dead (without a re-enrollment hook, at once). `clearing`: whether this call
    /// owns `inflight` (a revival of credentials found dead at start) and must clear it.
    private func revive(clearing: Bool = true) async -> RefreshResult {
        defer { if clearing { inflight = nil } }
        if let new = await reenroll?() {
            if let failure = save(VaultRecord(tokens: new, seedFingerprint: seedFingerprint, dead: false)) {
                // The install's old chain is retired on the server: keep the new one in memory
                // rather than stop (a restart then re-enrols again).
                logger.error("auth: the re-enrolled tokens could not be stored; kept in memory", metadata: ["error": "\(failure)"])
            }
            takeUp(new)
            return .refreshed
        }
        isDead = true
        nextProactive = nil
        timer?.cancel()
        timer = nil
        persist()
        logger.error("auth: credentials are dead; uploads stop until configure() supplies new tokens or a re-enrollment (rows are kept)")
        return .dead
    }

    /// Makes `new` the live set (already persisted by the caller), resets the breaker, arms the
    /// proactive timer and tells subscribers.
    private func takeUp(_ new: TokenSet) {
        tokens = new
        isDead = false
        consecutiveFailures = 0
        breakerUntil = nil
        nextProactive = new.expiresAt.map { Date(timeIntervalSince1970: $0 - config.skewMarginSeconds) }
        armTimer()
        changes.publish(AuthChange(accessToken: new.accessToken ?? "", refreshToken: new.refreshToken, expiresAt: new.expiryDate))
    }

    /// A failed refresh that may succeed later: counts towards the breaker and re-arms the timer.
    private func transientFailure(_ why: String, now: Date) -> RefreshResult {
        consecutiveFailures += 1
        if consecutiveFailures >= Self.breakerThreshold {
            breakerUntil = now.addingTimeInterval(Self.breakerDelay(failures: consecutiveFailures))
        }
        if tokens.expiresAt != nil {
            nextProactive = max(now.addingTimeInterval(Self.closedRetrySeconds), breakerUntil ?? .distantPast)
            armTimer()
        }
        logger.warning(
            "auth: token refresh failed, will retry",
            metadata: [
                "error": "\(Redaction.scrub(why, secrets: [tokens.accessToken, tokens.refreshToken]))",
                "consecutive_failures": "\(consecutiveFailures)",
                "breaker_open_until": "\(breakerUntil.map { "\(WireTimestamp($0))" } ?? "-")",
            ])
        return .transient(until: breakerUntil)
    }

    /// Breaker open period after `failures` consecutive failures (≥ 3): 30 s, 60 s, 120 s, … ≤ 30 min.
    static func breakerDelay(failures: Int) -> Double {
        let exponent = Double(max(0, failures - breakerThreshold))
        return min(breakerCap, breakerBase * pow(2, exponent))
    }

    // MARK: - Proactive timer

    private func armTimer() {
        timer?.cancel()
        timer = nil
        guard !stopped, !isDead, canRefresh, let due = nextProactive else { return }
        let delay = due.timeIntervalSince(clock.now())
        timer = Task { [clock] in
            if delay > 0 {
                do { try await clock.sleep(for: .seconds(delay)) } catch { return }
            }
            await self.proactiveFire()
        }
    }

    private func proactiveFire() async {
        timer = nil
        guard !stopped, !isDead, let due = nextProactive else { return }
        if clock.now() < due {
            armTimer()
            return
        }
        _ = await refresh()
    }

    // MARK: - State

    private func isDue(_ now: Date) -> Bool {
        guard tokens.accessToken?.isEmpty == false else { return true }
        guard let exp = tokens.expiresAt else { return false }
        return now.timeIntervalSince1970 >= exp - config.skewMarginSeconds
    }

    private func isExpired(_ now: Date) -> Bool {
        guard let exp = tokens.expiresAt else { return false }
        return now.timeIntervalSince1970 >= exp
    }
}
