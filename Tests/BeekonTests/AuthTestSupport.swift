@testable import Beekon
import BeekonTesting
import Foundation
import Logging
import Testing

let tokenURL = URL(string: "http://127.0.0.1:9/oauth/token")!

/// Sends requests for `tokenURL` to `token` and everything else to `ingest`, so a test
/// scripts the token endpoint and the ingest endpoint separately over one transport seam.
struct RoutingTransport: HTTPTransport {
    let token = ScriptedTransport()
    let ingest = ScriptedTransport()

    func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        if request.url == tokenURL { return try await token.send(request) }
        return try await ingest.send(request)
    }
}

/// A 2xx JSON answer from the token endpoint.
func tokenAnswer(_ json: String, status: Int = 200) -> Result<HTTPResponse, HTTPTransportError> {
    .success(HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(json.utf8)))
}

/// Records every log line (message + metadata) so tests can grep them for secrets.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    var lines: [String] { lock.withLock { storage } }
    var text: String { lines.joined(separator: "\n") }
    func append(_ line: String) { lock.withLock { storage.append(line) } }

    var logger: Logger {
        Logger(label: "beekon.test") { _ in CaptureHandler(capture: self) }
    }

    struct CaptureHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, b in b }
            let error = event.error.map { " error=\($0)" } ?? ""
            capture.append("\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))\(error)")
        }
    }
}

/// A refresher over a routing transport, a test clock and an in-memory vault.
struct RefresherHarness {
    let clock = TestClock()
    let transport = RoutingTransport()
    let secrets = InMemorySecretStore()
    let changes = Broadcast<AuthChange>()
    let logs = LogCapture()

    func refresher(_ config: AuthConfig, reenroll: TokenRefresher.Reenroll? = nil) async -> TokenRefresher {
        let r = TokenRefresher(
            config: config, transport: transport, clock: clock, secrets: secrets,
            changes: changes, logger: logs.logger, reenroll: reenroll)
        await r.start()
        return r
    }

    /// Epoch seconds `offset` from the clock's now.
    func epoch(_ offset: Double) -> Double { clock.now().timeIntervalSince1970 + offset }
}

/// A recipe against `tokenURL` with the standard refresh-token grant.
func authRecipe(
    access: String? = "seed-access-AAAA", refresh: String? = "seed-refresh-RRRR", expiresAt: Double? = nil,
    format: AuthConfig.BodyFormat = .form, mapping: AuthConfig.ResponseMapping? = nil,
    strategy: AuthConfig.Strategy = .bearer
) -> AuthConfig {
    AuthConfig(
        accessToken: access, refreshToken: refresh, expiresAt: expiresAt, strategy: strategy, refreshUrl: tokenURL,
        refreshPayload: ["grant_type": "refresh_token", "refresh_token": "{refreshToken}"],
        refreshBodyFormat: format, responseMapping: mapping)
}

extension Harness {
    /// A Beekon over a routing transport, an injected vault and a log capture.
    func beekon(transport: RoutingTransport, secrets: (any SecretStore)?, logs: LogCapture? = nil) -> Beekon {
        Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, logger: logs?.logger ?? Logger(label: "beekon.test"),
                transport: transport, randomUnit: { 0 }, secretStore: secrets))
    }
}

func syncConfig(auth: AuthConfig, headers: [String: String] = [:]) -> BeekonConfig {
    syncConfig(SyncConfig(url: loopbackURL, headers: headers, auth: auth))
}

extension HTTPRequest {
    /// The body as UTF-8 text (refresh requests are not gzipped).
    var text: String { String(decoding: body, as: UTF8.self) }
}
