@testable import BeekonAgent
import BeekonTestSupport
import Foundation
import Testing

/// `sync.trustedCertificates` in the agent's config file: PEM paths,
/// relative ones resolved against the config file's folder; anything else is a one-line
/// error naming the key, and a file that is not a certificate stops the agent with exit 2.
@Suite("Agent sync.trustedCertificates config")
struct AgentTrustedCertificatesConfigTests {
    @Test func relativePathsAreResolvedAgainstTheConfigFolder() throws {
        let tmp = TempDir()
        let config = try tmp.write(
            "agent.json", #"{"sync":{"url":"https://h.example/x","trustedCertificates":["ca.pem","/etc/ssl/x.pem"]}}"#)
        let parsed = try AgentConfig.load(path: config)
        let folder = URL(fileURLWithPath: config).deletingLastPathComponent()
        #expect(
            parsed.sdk.sync?.trustedCertificates == [folder.appendingPathComponent("ca.pem").standardizedFileURL.path, "/etc/ssl/x.pem"])
    }

    @Test(arguments: [#"[]"#, #""ca.pem""#, #"[5]"#, #"[""]"#])
    func anythingButAListOfPathsNamesTheKey(_ value: String) {
        do {
            _ = try AgentConfig.parse(Data(#"{"sync":{"url":"https://h.example/x","trustedCertificates":\#(value)}}"#.utf8))
            Issue.record("\(value) was accepted")
        } catch {
            #expect(error.description.contains("sync.trustedCertificates"), "\(error.description)")
        }
    }

    @Test func aFileThatIsNotACertificateExitsTwoWithOneLine() async throws {
        let tmp = TempDir()
        let pem = try tmp.write("ca.pem", "not a certificate")
        let config = try tmp.write("agent.json", #"{"sync":{"url":"https://h.example/x","trustedCertificates":["ca.pem"]}}"#)
        let out = try await AgentProcess.run(["sync", "--db", tmp.path("a.sqlite"), "--config", config, "--drain-timeout", "1"])
        #expect(!out.signalled && out.status == 2, "exit \(out.status): \(out.stderr)")
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        #expect(
            out.stderr.contains("bad config: invalid configuration: sync.trustedCertificates: \(pem): not a PEM certificate file"),
            "\(out.stderr)")
    }
}
