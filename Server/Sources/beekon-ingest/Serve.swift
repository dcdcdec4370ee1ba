import ArgumentParser
import BeekonIngest
import BeekonWire
import Foundation
import Hummingbird
import Logging

/// Runs the server until SIGTERM/SIGINT; in-flight requests finish first.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the ingest server (the default).")

    @Option(help: "Interface to bind.") var host = "127.0.0.1"
    @Option(help: "Port; 0 picks a free one (printed as 'listening on HOST:PORT').") var port = 8080
    @OptionGroup var db: DatabaseOptions
    @Option(help: "Path of the upload endpoint.") var ingestPath = "/v1/locations"
    @Option(help: "auto (off for SQLite without API keys on a loopback --host, else required), off, or required.") var auth = "auto"
    @Option(help: "A host name that Host and Origin may name while auth is off (repeatable; loopback names are always allowed).")
    var allowedHost: [String] = []
    @Option(help: "Static API key (repeatable). Env: BEEKON_API_KEYS, comma-separated.") var apiKey: [String] = []
    @Option(
        help:
            "Enroller key for the app's backend: may only create one-use enrollment codes for a person (repeatable). Env: BEEKON_ENROLLER_KEYS."
    )
    var enrollerKey: [String] = []
    @Option(help: "Access-token lifetime in seconds.") var accessTokenTtl = 900
    @Option(help: "Refresh-token lifetime in seconds.") var refreshTokenTtl = 30 * 86_400
    @Option(help: "Cap on the received (compressed) body in bytes.") var maxBodyBytes = 12 * 1024 * 1024
    @Option(help: "Cap on the body after gunzip in bytes (a 1,000-fix batch is ~0.3 MB).") var maxDecompressedBytes = 4 * 1024 * 1024
    @Option(help: "Seconds after which a device's newest fix counts as stale.") var staleAfter = 900
    @Option(help: "Seconds a request may wait for PostgreSQL before it is answered 503 (1-300).") var databaseTimeout = 10
    @Option(help: "Seconds between heartbeat comments on GET /v1/live (to streams that carried no event since the last).")
    var liveHeartbeat = 15.0
    @Option(help: "Seconds a new connection may take to send its first request's whole head before it is closed.")
    var firstRequestTimeout = 10.0
    @Option(help: "Seconds a keep-alive connection may idle between requests (the next head included) before it is closed.")
    var idleTimeout = 60.0
    @Option(help: "Seconds a request's body may take to arrive whole, from its head, before the connection is closed.")
    var bodyTimeout = 60.0
    @Option(help: "Most connections open at once (default: the descriptor limit less max(64, limit/8), after raising the soft limit).")
    var maxConnections: Int?
    @Option(help: "Most connections one client address holds at once (default: the connection cap less max(8, cap/8)).")
    var maxConnectionsPerClient: Int?
    @Option(help: "Most live streams (GET /v1/live) one share holds open at once; more get 429.") var maxStreamsPerShare = 32
    @Option(help: "Most command long-polls one device credential holds at once; more get 429.") var maxLongPollsPerCredential = 4
    @Option(
        help:
            "Failed credentials one client address may cause per minute; past them its /oauth/token and share-token requests get 429."
    )
    var authFailuresPerMinute = 60
    @Option(help: "Pending connections the kernel may queue before they are accepted (default: net.core.somaxconn, which caps it anyway).")
    var listenBacklog: Int?
    @Option(help: "Seconds the event log keeps events; older Last-Event-IDs get a reset event.") var eventRetention = 7 * 86_400
    @Option(
        help:
            "PostgreSQL: delete fixes older than this many days by dropping weekly partitions (each device keeps its newest fix; default: keep all)."
    )
    var retentionDays: Int?
    @Option(help: "Base URL printed in share links (default: the request's Host).") var publicUrl: String?
    @Option(help: "Reporting interval in seconds assumed for devices that declare none (device status).") var expectedInterval = 300
    @Flag(inversion: .prefixedNo, help: "Concurrent uploads share one transaction and one fsync (group commit).")
    var groupCommit = true
    @Option(help: "Locate rate limit: seconds per request per device (0 = no limit).") var locateInterval = 60.0
    @Option(help: "Locate rate limit: requests a device may get back to back.") var locateBurst = 3
    @Option(help: "Seconds after which an unanswered locate request expires.") var locateExpiry = 120
    @Option(help: "APNs: path of the .p8 token-signing key (off unless set with --apns-key-id and --apns-team-id). Env: BEEKON_APNS_KEY.")
    var apnsKey: String?
    @Option(help: "APNs: the key's 10-character key id. Env: BEEKON_APNS_KEY_ID.") var apnsKeyId: String?
    @Option(help: "APNs: the developer team id. Env: BEEKON_APNS_TEAM_ID.") var apnsTeamId: String?
    @Option(help: "APNs: base URL replacing api.push.apple.com and api.sandbox.push.apple.com (a local stand-in).") var apnsUrl: String?
    @Option(
        help:
            "APNs: a bundle id pushes may go to (repeat for several apps; at least one with APNs); a device token for another topic is refused. Env: BEEKON_APNS_TOPICS (comma-separated)."
    )
    var apnsTopic: [String] = []
    @Option(help: "FCM: path of the Google service-account JSON (off unless set). Env: BEEKON_FCM_SERVICE_ACCOUNT.")
    var fcmServiceAccount: String?
    @Option(help: "FCM: base URL of the HTTP v1 API.") var fcmUrl = "https://fcm.googleapis.com"
    @Option(help: "Extra trusted root certificates (PEM) for the push providers' TLS.") var pushCaFile: String?
    @Flag(
        inversion: .prefixedNo,
        help: "With a push provider: a device silent past its declared interval gets one visible notification a day (a nudge).")
    var nudges = true
    @Option(help: "Nudges: the least silence in seconds before the first one, whatever the device's interval.") var nudgeAfter = 3600
    @Option(help: "Nudges: days in a row a device that stays silent is nudged (once a day).") var nudgeDays = 3
    @Option(help: "Nudges: the notification's title.") var nudgeTitle = NudgePolicy.defaultText.title
    @Option(help: "Nudges: the notification's body.") var nudgeBody = NudgePolicy.defaultText.body
    @Option(help: "XYZ tile URL template for the dashboard map, e.g. https://tiles.example.com/{z}/{x}/{y}.png.") var tileUrl: String?

    func validate() throws {
        guard (1...300).contains(databaseTimeout) else { throw ValidationError("--database-timeout must be 1 to 300 seconds") }
        guard liveHeartbeat >= 0.05, liveHeartbeat <= 3_600 else { throw ValidationError("--live-heartbeat must be 0.05 to 3600 seconds") }
        guard firstRequestTimeout >= 0.1, firstRequestTimeout <= 3_600 else {
            throw ValidationError("--first-request-timeout must be 0.1 to 3600 seconds")
        }
        if let tileUrl, !IngestConfiguration.isValidTileURL(tileUrl) {
            throw ValidationError(
                "--tile-url must be an http(s) URL template with {z}, {x} and {y}, e.g. https://tiles.example.com/{z}/{x}/{y}.png")
        }
        guard idleTimeout >= 0.1, idleTimeout <= 86_400 else { throw ValidationError("--idle-timeout must be 0.1 to 86400 seconds") }
        guard bodyTimeout >= 0.1, bodyTimeout <= 3_600 else { throw ValidationError("--body-timeout must be 0.1 to 3600 seconds") }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1") }
        if let maxConnectionsPerClient, maxConnectionsPerClient < 1 {
            throw ValidationError("--max-connections-per-client must be at least 1")
        }
        for (name, value) in [
            ("--max-streams-per-share", maxStreamsPerShare), ("--max-long-polls-per-credential", maxLongPollsPerCredential),
            ("--auth-failures-per-minute", authFailuresPerMinute),
        ] where value < 1 {
            throw ValidationError("\(name) must be at least 1")
        }
        if let listenBacklog, !(1...1_048_576).contains(listenBacklog) { throw ValidationError("--listen-backlog must be 1 to 1048576") }
        guard expectedInterval >= 1 else { throw ValidationError("--expected-interval must be at least 1 second") }
        if let retentionDays, !(1...36_500).contains(retentionDays) { throw ValidationError("--retention-days must be 1 to 36500") }
        guard eventRetention >= 60 else { throw ValidationError("--event-retention must be at least 60 seconds") }
        guard locateInterval >= 0, locateInterval <= 86_400 else { throw ValidationError("--locate-interval must be 0 to 86400 seconds") }
        guard (1...1_000).contains(locateBurst) else { throw ValidationError("--locate-burst must be 1 to 1000") }
        guard (1...86_400).contains(locateExpiry) else { throw ValidationError("--locate-expiry must be 1 to 86400 seconds") }
        guard (0...30 * 86_400).contains(nudgeAfter) else { throw ValidationError("--nudge-after must be 0 to 2592000 seconds") }
        guard (1...365).contains(nudgeDays) else { throw ValidationError("--nudge-days must be 1 to 365") }
        for (name, text) in [("--nudge-title", nudgeTitle), ("--nudge-body", nudgeBody)] {
            guard !text.isEmpty, text.utf8.count <= 512 else { throw ValidationError("\(name) must be 1 to 512 bytes") }
        }
    }

    /// The push senders from flags, else the environment; an APNs half-configured is an error.
    func pushConfiguration() throws -> PushConfiguration {
        let env = ProcessInfo.processInfo.environment
        var push = PushConfiguration(caFile: pushCaFile)
        let key = apnsKey ?? env["BEEKON_APNS_KEY"]
        let keyId = apnsKeyId ?? env["BEEKON_APNS_KEY_ID"]
        let teamId = apnsTeamId ?? env["BEEKON_APNS_TEAM_ID"]
        switch (key, keyId, teamId) {
        case (nil, nil, nil): break
        case (let key?, let keyId?, let teamId?):
            let topics = apnsTopic.isEmpty ? (env["BEEKON_APNS_TOPICS"] ?? "").split(separator: ",").map(String.init) : apnsTopic
            let pinned = Set(topics.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            guard !pinned.isEmpty else { throw ValidationError("APNs needs --apns-topic: the bundle id of each app this server pushes to") }
            push.apns = APNsConfiguration(keyPath: key, keyId: keyId, teamId: teamId, topics: pinned, url: apnsUrl)
        default: throw ValidationError("APNs needs all three of --apns-key, --apns-key-id and --apns-team-id")
        }
        if let account = fcmServiceAccount ?? env["BEEKON_FCM_SERVICE_ACCOUNT"] {
            push.fcm = FCMConfiguration(serviceAccountPath: account, endpoint: fcmUrl)
        }
        return push
    }

    func run() async throws {
        guard let mode = AuthMode(rawValue: auth) else {
            throw ValidationError("--auth must be auto, off or required")
        }
        var keys = apiKey
        if let env = ProcessInfo.processInfo.environment["BEEKON_API_KEYS"] {
            keys += env.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var config = IngestConfiguration(
            host: host, port: port, database: try db.location(), ingestPath: ingestPath, authMode: mode, apiKeys: keys,
            accessTokenTTLSeconds: accessTokenTtl, refreshTokenTTLSeconds: refreshTokenTtl,
            maxBodyBytes: maxBodyBytes, maxDecompressedBytes: maxDecompressedBytes, staleAfterSeconds: staleAfter,
            databaseTimeoutSeconds: databaseTimeout)
        config.enrollerKeys = enrollerKey
        if let env = ProcessInfo.processInfo.environment["BEEKON_ENROLLER_KEYS"] {
            config.enrollerKeys += env.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        config.liveHeartbeatSeconds = liveHeartbeat
        config.firstRequestTimeoutSeconds = firstRequestTimeout
        config.idleTimeoutSeconds = idleTimeout
        config.bodyTimeoutSeconds = bodyTimeout
        config.maxConnections = maxConnections
        config.maxConnectionsPerClient = maxConnectionsPerClient
        config.maxStreamsPerShare = maxStreamsPerShare
        config.maxLongPollsPerCredential = maxLongPollsPerCredential
        config.authFailuresPerMinute = authFailuresPerMinute
        config.listenBacklog = listenBacklog
        config.eventRetentionSeconds = eventRetention
        if retentionDays != nil, case .sqlite = config.database {
            throw ValidationError("--retention-days needs PostgreSQL (--database postgres://...)")
        }
        config.retentionDays = retentionDays
        config.publicURL = publicUrl
        config.expectedIntervalSeconds = expectedInterval
        config.groupCommit = groupCommit
        config.locateIntervalSeconds = locateInterval
        config.locateBurst = locateBurst
        config.locateExpirySeconds = locateExpiry
        config.tileURL = tileUrl
        config.push = try pushConfiguration()
        config.nudges =
            nudges
            ? NudgePolicy(text: WireNudgePush(title: nudgeTitle, body: nudgeBody), minimumSilenceSeconds: nudgeAfter, limit: nudgeDays)
            : nil
        config.allowedHosts = allowedHost
        let app = try IngestServer.buildApplication(
            config, logger: db.logger(),
            onListening: { host, port in
                // A plain line on stdout for scripts and tests that started us with --port 0.
                FileHandle.standardOutput.write(Data("listening on \(host):\(port)\n".utf8))
            })
        try await app.runService()
    }
}
