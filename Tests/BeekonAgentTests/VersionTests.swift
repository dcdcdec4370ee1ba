import BeekonWire
import Foundation
import Testing

/// One version everywhere: `beekon --version` prints `BeekonVersion.current`, the constant
/// every upload carries as `sdk_version` (checked byte for byte in SyncEngineTests) and
/// `beekon-ingest --version` prints (checked in the Server package).
@Suite("Agent: version") struct VersionTests {
    @Test func versionFlagPrintsTheOneVersionConstant() async throws {
        let run = try await AgentProcess.run(["--version"], timeout: .seconds(30))
        #expect(run.status == 0)
        #expect(run.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == BeekonVersion.current)
        #expect(BeekonVersion.current.split(separator: ".").count == 3, "semantic versioning: MAJOR.MINOR.PATCH")
    }
}
