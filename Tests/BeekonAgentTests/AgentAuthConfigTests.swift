import BeekonTestSupport
import Foundation
import Testing

/// `sync.auth` in the agent's config file: the `AuthConfig` field names, strict.
@Suite("Agent sync.auth config")
struct AgentAuthConfigTests {
    static let cases: [AgentBadInputTests.BadConfig] = [
        .init(
            label: "unknown auth key",
            json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"accessToken":"SECRET-AT-1","refreshUrll":"x"}}}"#,
            mentions: ["sync.auth.refreshUrll"]),
        .init(
            label: "unknown mapping key",
            json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"responseMapping":{"access":"a.b"}}}}"#,
            mentions: ["sync.auth.responseMapping.access"]),
        .init(
            label: "bad strategy", json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"strategy":"basic"}}}"#,
            mentions: ["sync.auth.strategy"]),
        .init(
            label: "bad body format", json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"refreshBodyFormat":"xml"}}}"#,
            mentions: ["sync.auth.refreshBodyFormat"]),
        .init(
            label: "token not a string", json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"refreshToken":5}}}"#,
            mentions: ["sync.auth.refreshToken"]),
        .init(
            label: "plain http refresh URL",
            json: #"{"sync":{"url":"http://127.0.0.1:9/x","auth":{"refreshUrl":"http://auth.example.com/t","accessToken":"SECRET-AT-1"}}}"#,
            mentions: ["sync.auth.refreshUrl"]),
    ]

    @Test(arguments: cases)
    func badAuthConfigExitsTwoNamingTheKeyWithoutTheToken(_ bad: AgentBadInputTests.BadConfig) async throws {
        let tmp = TempDir()
        let config = try tmp.write("config.json", bad.json)
        let out = try await AgentProcess.run(
            ["track", "--source", "replay:\(Fixtures.visnjanGPX)", "--db", tmp.path("a.sqlite"), "--config", config],
            timeout: .seconds(60))
        #expect(out.status == 2, "exit \(out.status); stderr: \(out.stderr)")
        for m in bad.mentions { #expect(out.stderr.contains(m), "the error should mention \(m): \(out.stderr)") }
        #expect(!out.stderr.contains("SECRET-AT-1") && !out.stdout.contains("SECRET-AT-1"))
    }
}
