import BeekonIngest
import Testing

/// The test servers' own diagnostics: a stop that overruns names the service that hung, from
/// the lifecycle lines each server keeps (`LifecycleTrail`). Here, that the lines are kept.
@Suite struct TestServerTrailTests {
    @Test("a test server keeps its service lifecycle: every service it starts, and each one's end at a graceful stop")
    func theLifecycleTrailNamesTheServices() async throws {
        let db = try await Backend.sqlite.freshDatabase()
        defer { db.remove() }
        let server = try await TestServer.start(IngestConfiguration(database: db.location, authMode: .off))
        #expect(try await HTTP.send("GET", server.base + "/healthz").status == 200)
        try await server.stop()
        let lines = server.lifecycle.lines
        #expect(lines.contains { $0.contains("Starting service lifecycle") }, "\(lines)")
        #expect(lines.contains { $0.contains("sl-service=") }, "no line names a service: \(lines)")
        #expect(lines.count <= LifecycleTrail.kept)
    }

    @Test("the trail's logger keeps the lifecycle at debug but passes on only what the base logger's level lets through")
    func theConsoleStaysAtTheBaseLevel() {
        let capture = LogCapture()
        var base = capture.logger
        base.logLevel = .error
        let trail = LifecycleTrail()
        let logger = trail.logger(over: base)
        logger.debug("Starting service", metadata: ["sl-service": "X"])
        logger.error("broken")
        #expect(capture.lines == ["error broken"])
        #expect(trail.lines.count == 1 && trail.lines[0].contains("sl-service=X"))
    }
}
