import BeekonChaos
import Foundation
import Testing

/// Issue 18 item 4, SY-2, AU-1..6 over TLS: nginx with a certificate from a throwaway CA
/// terminates https (HTTP/2) in front of a real `beekon-ingest` with auth required, and the
/// real `beekon` agent, trusting that CA through `sync.trustedCertificates`, refreshes its
/// token and uploads every fix. A wrong CA, and plain http to a non-loopback host, fail
/// with a clear message and keep every row.
@Suite("TLS end to end: nginx with a test CA in front of beekon-ingest", .serialized)
struct TLSEndToEndTests {
    @Test func theAgentUploadsOverHTTPSTrustingAPrivateCAAndKeepsEveryRowOtherwise() async throws {
        let dir = try ChaosDir()
        let pki = try await TestPKI.make(in: dir)
        let database = dir.path("ingest.sqlite")
        let (access, refresh) = try await ChaosBinaries.issueToken(subject: "tls", database: database, dir: dir)

        try await ChaosTests.withServerProcess(database: database, extra: ["--auth", "required"]) { server in
            let nginx = try await blocking { try NginxTLSProxy(dir: dir, upstreamPort: server.port, pki: pki) }
            defer { nginx.stop() }
            let agent = try ChaosAgent(dir: try ChaosDir(), url: "")
            // The seeded access token counts as expired: the first request is a refresh, over https.
            func config(_ name: String, url: String, ca: String) throws -> String {
                let path = agent.dir.path(name)
                try Data(
                    """
                    {"minTimeBetweenLocationsSeconds":0,"minDistanceBetweenLocationsMeters":0,
                     "sync":{"url":"\(url)/v1/locations","batchSize":100,"syncThreshold":100,"requestTimeoutSeconds":20,
                             "trustedCertificates":["\(ca)"],
                             "auth":{"accessToken":"\(access)","refreshToken":"\(refresh)","expiresAt":1,
                                     "refreshUrl":"\(url)/oauth/token",
                                     "refreshPayload":{"grant_type":"refresh_token","refresh_token":"{refreshToken}"}}}}
                    """.utf8
                ).write(to: URL(fileURLWithPath: path))
                return path
            }
            func pending() async throws -> (pending: Int, locations: Int) {
                let report = try await agent.status()
                return (report["pending_uploads"] as? Int ?? -1, report["locations"] as? Int ?? -1)
            }

            // 1. The server's certificate from a CA the agent does not trust: nothing goes out.
            let wrong = try config("wrong-ca.json", url: nginx.url, ca: pki.wrongCA)
            let refused = try await agent.run(
                [
                    "track", "--source", "replay:\(ChaosTests.track)", "--speed", "max", "--db", agent.db,
                    "--config", wrong, "--drain-timeout", "6",
                ], timeout: .seconds(120))
            #expect(refused.status != 0 && !refused.signalled, "exit \(refused.status): \(refused.stderr.suffix(1500))")
            #expect(
                refused.stderr.contains("certificate of localhost is not trusted (add its CA to sync.trustedCertificates)"),
                "\(refused.stderr.suffix(1500))")
            let afterRefusal = try await pending()
            #expect(afterRefusal.locations > 1000, "the walk was stored: \(afterRefusal)")
            #expect(afterRefusal.pending == afterRefusal.locations, "every row kept: \(afterRefusal)")
            #expect(!nginx.accessLog.contains("POST"), "no request passed the TLS handshake:\n\(nginx.accessLog)")

            // 2. Plain http to a host that is not loopback: refused before any request (SY-2).
            let plain = agent.dir.path("plain.json")
            try Data(#"{"sync":{"url":"http://ingest.beekon.invalid/v1/locations"}}"#.utf8).write(to: URL(fileURLWithPath: plain))
            let insecure = try await agent.run(["sync", "--db", agent.db, "--config", plain, "--drain-timeout", "5"])
            #expect(insecure.status != 0 && !insecure.signalled)
            #expect(
                insecure.stderr.contains("sync.url must use https; plain http is allowed only to loopback hosts"),
                "\(insecure.stderr)")
            #expect(try await pending().pending == afterRefusal.locations, "every row kept")

            // 3. The right CA: a token refresh and every upload over https through nginx.
            let right = try config("right-ca.json", url: nginx.url, ca: pki.ca)
            let synced = try await agent.run(
                ["sync", "--db", agent.db, "--config", right, "--drain-timeout", "60"],
                timeout: .seconds(120))
            #expect(synced.status == 0 && !synced.signalled, "exit \(synced.status): \(synced.stderr.suffix(1500))")
            #expect(synced.stdout.contains("uploads complete"), "\(synced.stdout)")
            #expect(try await pending().pending == 0, "every stored fix acknowledged")
            let log = nginx.accessLog.split(separator: "\n")
            #expect(log.contains { $0.contains("\"POST /oauth/token HTTP/2.0\" 200") }, "refresh over https:\n\(nginx.accessLog)")
            let uploads = log.filter { $0.contains("\"POST /v1/locations HTTP/2.0\" 200") }.count
            #expect(uploads >= afterRefusal.locations / 100, "\(uploads) uploads over HTTP/2:\n\(nginx.accessLog)")
        }
    }
}
