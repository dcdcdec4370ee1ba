import BeekonTestSupport
import Foundation
import Testing

@Suite("Agent: demo")
struct AgentDemoTests {
    /// `beekon demo` (the README's "run it" command) replays the bundled sample and summarises it.
    @Test func demoRunsAndPrintsASummary() async throws {
        let tmp = TempDir()
        let db = tmp.path("demo.sqlite")
        let out = try await AgentProcess.run(["demo", "--db", db], timeout: .seconds(120))
        #expect(out.status == 0 && !out.signalled, "exit \(out.status): \(out.stderr)")
        let storedLine = try #require(out.stdout.first { $0.contains("fixes stored") }, "no 'fixes stored' in:\n\(out.stdoutText)")
        let stored = storedLine.split(separator: " ").lazy.compactMap { Int($0) }.first
        #expect((stored ?? 0) > 0, "\(storedLine)")
        #expect(out.stdoutText.contains("fixes read"))
        // The summary matches the database it wrote, and the session is closed.
        let status = try await AgentStatus.read(db: db)
        #expect(status.locations == stored)
        #expect(!status.trackingIntent)
        let rows = try await HistoryRow.read(db: db)
        #expect(rows.count == stored)
    }

    @Test func demoRejectsABadPreset() async throws {
        let tmp = TempDir()
        let out = try await AgentProcess.run(["demo", "--db", tmp.path("demo.sqlite"), "--preset", "turbo"], timeout: .seconds(60))
        #expect(out.status == 2, "exit \(out.status): \(out.stderr)")
    }
}
