import ArgumentParser
import Beekon
import BeekonHTTPClient

/// The agent's upload (and token refresh) transport: AsyncHTTPClient with keep-alive,
/// trusting `sync.trustedCertificates` besides the system's CA store.
enum AgentTransport {
    /// The transport for `config`'s sync block, or nil without one (no network stack
    /// started). A certificate file that cannot be used exits 2 with one line.
    static func make(_ config: AgentConfig?) throws -> (any HTTPTransport)? {
        guard let sync = config?.sdk.sync else { return nil }
        do {
            return try AsyncHTTPClientTransport(trustedCertificatePaths: sync.trustedCertificates ?? [])
        } catch {
            Terminal.error("bad config: \(error.description)")
            throw ExitCode(2)
        }
    }
}
