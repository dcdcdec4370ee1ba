import Foundation

/// Everything `beekon-ingest` needs to run; built by the command line (or by tests).
package struct IngestConfiguration: Sendable {
    /// Interface to bind, e.g. `127.0.0.1` (default) or `0.0.0.0`.
    package var host: String
    /// TCP port; `0` asks the OS for a free one (the bound port is reported through `onListening` and the log).
    package var port: Int
    /// Where fixes are stored.
    package var database: DatabaseLocation
    /// Path of the ingest endpoint (`POST`), default `/v1/locations`.
    package var ingestPath: String
    /// Whether requests must carry a credential.
    package var authMode: AuthMode
    /// Static API keys accepted as `Authorization: Bearer <key>` or `X-API-Key: <key>`.
    package var apiKeys: [String]
    /// Enroller keys (issue 52): the app's own backend may create one-use enrollment codes
    /// bound to a person with them, and do nothing else.
    package var enrollerKeys: [String] = []
    /// Lifetime of access tokens issued by `POST /oauth/token`, in seconds.
    package var accessTokenTTLSeconds: Int
    /// Lifetime of refresh tokens, in seconds (each rotation issues a fresh one).
    package var refreshTokenTTLSeconds: Int
    /// Cap on the request body as received (compressed), in bytes.
    package var maxBodyBytes: Int
    /// Cap on the body after gunzip, in bytes; a larger body is answered 413.
    package var maxDecompressedBytes: Int
    /// A device whose newest fix is older than this is reported as stale by the read API.
    package var staleAfterSeconds: Int
    /// Longest a request waits for PostgreSQL (a free pooled connection and the answer)
    /// before it is answered 503 with `Retry-After`; 1…300 seconds, default 10.
    package var databaseTimeoutSeconds: Int
    /// Seconds between heartbeat comments on `GET /v1/live` (default 15).
    package var liveHeartbeatSeconds: Double = 15
    /// The `retry:` hint sent to live clients, in milliseconds (default 2000).
    package var liveRetryMillis: Int = 2_000
    /// How long the event log keeps events (default 7 days); older cursors get `reset`.
    package var eventRetentionSeconds: Int = 7 * 86_400
    /// PostgreSQL only: fixes older than this many days are deleted by dropping their weekly
    /// partitions (each device keeps its newest fix); nil (the default): fixes are kept forever.
    package var retentionDays: Int?
    /// How long the live event log keeps events: `eventRetentionSeconds`, but never longer than
    /// the fix retention (a viewer resuming from the log must not replay a fix retention dropped).
    package var effectiveEventRetentionSeconds: Int {
        guard let retentionDays else { return eventRetentionSeconds }
        return min(eventRetentionSeconds, retentionDays * 86_400)
    }
    /// How often each instance polls the event log even without a wake-up (default 1 s).
    package var livePollSeconds: Double = 1
    /// How long a new connection may take to send the whole head of its first request before
    /// it is closed (default 10 s; a silent or header-trickling connection cannot hold a slot).
    package var firstRequestTimeoutSeconds: Double = 10
    /// Seconds a keep-alive connection may stay idle between requests, the next request's
    /// whole head included, before it is closed (a response in progress is never cut).
    package var idleTimeoutSeconds: Double = 60
    /// Seconds a request's body may take to arrive whole, from its head (issue 28: a trickled body).
    package var bodyTimeoutSeconds: Double = 60
    /// The most connections open at once; nil: derived from the descriptor limit (the soft
    /// limit less `max(64, limit / 8)`, after raising the soft limit to the hard one).
    package var maxConnections: Int?
    /// The most connections one client address holds at once; nil: the cap less
    /// `max(8, cap / 8)`, so one address never takes every slot (issue 50).
    package var maxConnectionsPerClient: Int?
    /// The most live streams one share holds open at once (issue 50; default 32). Admin keys
    /// and auth off are not capped.
    package var maxStreamsPerShare: Int = 32
    /// The most command long-polls one device credential holds at once (issue 50; default 4).
    package var maxLongPollsPerCredential: Int = 4
    /// Failed credentials (401, and `/oauth/token` refusals) one client address may cause per
    /// minute before its token-route and share-token requests get 429 (issue 50; default 60).
    package var authFailuresPerMinute: Int = 60
    /// The listen socket's backlog (pending connections the kernel queues before `accept`);
    /// nil: the kernel's ceiling, `net.core.somaxconn` (``ConnectionLimit/defaultListenBacklog(somaxconnPath:)``).
    package var listenBacklog: Int?
    /// Events each instance keeps in memory for live streams (default 20,000); a viewer
    /// further behind reads from the store.
    package var liveRingCapacity: Int = 20_000
    /// `SO_SNDBUF` of live-stream connections; nil: the kernel's (auto-tuned). Tests make it
    /// small so that a viewer that stops reading fills it quickly.
    package var liveSendBufferBytes: Int?
    /// The reporting interval assumed for a device that declares none, in seconds (default 300).
    package var expectedIntervalSeconds: Int = 300
    /// Concurrent uploads share one transaction (group commit, issue 32; default on).
    package var groupCommit: Bool = true
    /// How often device statuses are recomputed, in seconds (default 5).
    package var statusCheckSeconds: Double = 5
    /// The base URL printed in share links (e.g. `https://track.example.com`); nil: the request's Host.
    package var publicURL: String?
    /// Per-device locate limit: one request per this many seconds refills the bucket (default 60; 0 = no limit).
    package var locateIntervalSeconds: Double = 60
    /// Per-device locate burst: requests that may be made back to back (default 3).
    package var locateBurst: Int = 3
    /// Seconds after which an unanswered locate request expires (default 120).
    package var locateExpirySeconds: Int = 120
    /// An XYZ tile URL template (`https://tiles.example.com/{z}/{x}/{y}.png`) the dashboard draws
    /// under its map; nil: the map is drawn without tiles (no internet needed).
    package var tileURL: String?
    /// Silent pushes that wake devices for locate requests (issue 30); off when both are nil.
    package var push = PushConfiguration()
    /// Visible nudges to devices that stopped reporting, through the push senders (docs/nudges.md);
    /// nil: none. Sent only when a push provider is configured.
    package var nudges: NudgePolicy? = NudgePolicy()
    /// How often the nudger looks for devices to nudge, in seconds (default 60).
    package var nudgeCheckSeconds: Double = 60
    /// Extra host names that `Host` and `Origin` may name while auth is off (loopback
    /// names, the bound host and the `publicURL` host are always allowed).
    package var allowedHosts: [String] = []
    /// How the share access log is bounded: rows kept at most, and for how long (issue 28).
    package var shareAccessLog = ShareAccessRetention()

    /// Creates a configuration; every value has the documented default.
    package init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        database: DatabaseLocation = .sqlite(path: "beekon-ingest.sqlite"),
        ingestPath: String = "/v1/locations",
        authMode: AuthMode = .auto,
        apiKeys: [String] = [],
        accessTokenTTLSeconds: Int = 900,
        refreshTokenTTLSeconds: Int = 30 * 86_400,
        maxBodyBytes: Int = 12 * 1024 * 1024,
        maxDecompressedBytes: Int = 4 * 1024 * 1024,
        staleAfterSeconds: Int = 900,
        databaseTimeoutSeconds: Int = 10
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.ingestPath = ingestPath.hasPrefix("/") ? ingestPath : "/" + ingestPath
        self.authMode = authMode
        self.apiKeys = apiKeys
        self.accessTokenTTLSeconds = accessTokenTTLSeconds
        self.refreshTokenTTLSeconds = refreshTokenTTLSeconds
        self.maxBodyBytes = maxBodyBytes
        self.maxDecompressedBytes = maxDecompressedBytes
        self.staleAfterSeconds = staleAfterSeconds
        self.databaseTimeoutSeconds = min(max(databaseTimeoutSeconds, 1), 300)
    }

    /// Whether authentication is enforced once `auto` is resolved: `auto` means off
    /// only for SQLite without API keys bound to a loopback address (the zero-setup mode,
    /// reachable from this machine alone), on otherwise (issue 28, finding 6).
    package var authRequired: Bool {
        switch authMode {
        case .off: return false
        case .required: return true
        case .auto:
            if case .sqlite = database, apiKeys.isEmpty, enrollerKeys.isEmpty, Self.isLoopback(host) { return false }
            return true
        }
    }

    /// Whether a `--tile-url` is an http(s) URL template with `{z}`, `{x}` and `{y}` and no
    /// character that could leave the page's script string (quotes, `<`, `>`, `\`, spaces).
    package static func isValidTileURL(_ template: String) -> Bool {
        guard template.hasPrefix("https://") || template.hasPrefix("http://"), template.count <= 2_048 else { return false }
        guard ["{z}", "{x}", "{y}"].allSatisfy(template.contains) else { return false }
        let forbidden = Set("\"'<>\\` ")
        return !template.contains { forbidden.contains($0) || $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }
    }

    /// Whether `host` (a `--host` value) is a loopback address or name.
    package static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        return h == "localhost" || h == "::1" || h == "[::1]" || h.hasPrefix("127.")
    }
}

/// How the server treats credentials.
package enum AuthMode: String, Sendable, CaseIterable {
    /// Off for the SQLite zero-setup mode without API keys on a loopback bind; required otherwise.
    case auto
    /// Every request is accepted without credentials (logged loudly at start-up).
    case off
    /// Ingest needs an API key or an access token; the read API needs an API key.
    case required
}
