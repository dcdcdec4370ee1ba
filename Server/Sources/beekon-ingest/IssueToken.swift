import ArgumentParser
import BeekonIngest
import BeekonWire
import Foundation
import Logging

/// Seeds a device: prints a token response with a fresh refresh token.
struct IssueToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issue-token",
        abstract: "Issue an access token and a new refresh-token chain for a device (prints JSON).")

    @Option(help: "Who the tokens are for, e.g. a device name (1-100 printable ASCII characters); default: the install id.")
    var subject: String?
    @Option(
        help:
            "The install the tokens act for (its install_id); without it they are bound to the first install they upload as.")
    var installId: String?
    @OptionGroup var db: DatabaseOptions
    @Option(help: "Access-token lifetime in seconds.") var accessTokenTtl = 900
    @Option(help: "Refresh-token lifetime in seconds.") var refreshTokenTtl = 30 * 86_400

    func validate() throws {
        if let installId, UUID(uuidString: installId) == nil { throw ValidationError("--install-id must be a UUID") }
        if subject == nil && installId == nil { throw ValidationError("give --subject, --install-id or both") }
    }

    func run() async throws {
        let logger = db.logger()
        let install = installId.flatMap(UUID.init(uuidString:))
        let subject = self.subject ?? install?.wireString ?? ""
        let config = IngestConfiguration(database: try db.location())
        let store = try IngestServer.makeStore(config, logger: logger)
        let grant = try await IngestServer.withServices(store.services, logger: logger) {
            try await store.migrate()
            let tokens = TokenService(store: store.tokens, accessTTLSeconds: accessTokenTtl, refreshTTLSeconds: refreshTokenTtl)
            try await tokens.loadKey()
            return try await tokens.issue(subject: subject, installId: install)
        }
        print(String(decoding: grant.encoded(), as: UTF8.self))
    }
}
