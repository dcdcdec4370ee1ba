import BeekonWire
import BeekonTestSupport
import Beekon
import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// LC-6/LC-7 end to end: a real `beekon track` process killed and restarted.
@Suite("Agent lifecycle: kill, terminate, interrupt, stop", .serialized, .tags(.chaos, .slow), .skippable(.chaos, .slow))
struct AgentLifecycleTests {
    static func trackArgs(_ track: String, speed: String, db: String, config: String) -> [String] {
        ["track", "--source", "replay:\(track)", "--speed", speed, "--db", db, "--config", config]
    }

    /// SIGKILL mid-replay, restart with the same arguments: it resumes the same session by
    /// itself, keeps every row stored before the kill and ends with exactly the rows an
    /// uninterrupted run of the same track and config stores.
    @Test func sigkillMidReplayResumesSameSessionAndLosesNoRow() async throws {
        let tmp = TempDir()
        let db = tmp.path("killed.sqlite")
        let config = try tmp.gateOffConfig()
        let args = Self.trackArgs(Fixtures.walkGPX, speed: "20", db: db, config: config)
        let killAt = 100

        // 1. Run until into the replay (1,856 fixes at 20× ≈ 93 s; 100 stored ≈ 5 s), then
        // SIGKILL, sent by the stdout reader on the first matching progress line: once a 50×
        // replay (37 s) ended before the test task, starved, got to send the kill itself.
        let first = try AgentProcess(args)
        first.send(SIGKILL, atFirstLine: { (Progress.value("stored", in: $0) ?? 0) >= killAt })
        let start = try await first.waitForLine(timeout: .seconds(60), "the start line") { $0.sessionIDFromStartLine != nil }
        #expect(start.line.hasPrefix("started session "), "a fresh database starts a new session: \(start.line)")
        let session = try #require(start.line.sessionIDFromStartLine)
        let progress = try await first.waitForLine(timeout: .seconds(120), "stored ≥ \(killAt)") {
            (Progress.value("stored", in: $0) ?? 0) >= killAt
        }
        let killed = try await first.waitForExit(timeout: .seconds(120))
        #expect(killed.signalled && killed.status == SIGKILL, "exit \(killed.status), signalled \(killed.signalled)")
        #expect(!killed.stdout.contains { $0.hasPrefix("source ended") }, "the replay ended before the kill: \(progress.line)")

        // 2. The intent survived the kill.
        let status = try await AgentStatus.read(db: db)
        #expect(status.trackingIntent)
        #expect(status.sessionID == session)
        let k = status.locations
        #expect(k >= killAt)
        #expect(k < 1_856, "the kill came after the end of the track")
        let beforeRows = try await HistoryRow.read(db: db)
        #expect(beforeRows.count == k)

        // 3. Restart with the same source, database and config: it resumes the session by itself
        // and runs to the end. The replay's pace is no part of what is stored (the fixes keep the
        // track's times; step 5's reference runs at full speed too), so the rest runs at full speed.
        let second = try AgentProcess(Self.trackArgs(Fixtures.walkGPX, speed: "max", db: db, config: config))
        let resumed = try await second.waitForLine(timeout: .seconds(60), "the start line") { $0.sessionIDFromStartLine != nil }
        #expect(resumed.line == "resumed session \(session)")
        let finished = try await second.waitForExit(timeout: .seconds(360))
        #expect(finished.status == 0 && !finished.signalled, "exit \(finished.status): \(finished.stderr)")
        #expect(finished.stdout.contains { $0.hasPrefix("source ended") }, "\(finished.stdout.suffix(3))")

        // 4. One session, no duplicates, nothing lost.
        let rows = try await HistoryRow.read(db: db)
        let foreign = rows.filter { $0.sessionID != session }.count
        #expect(foreign == 0, "\(foreign) rows of another session")
        let duplicateIDs = rows.count - Set(rows.map(\.id)).count
        let duplicateTimes = rows.count - Set(rows.map(\.timestamp)).count
        #expect(duplicateIDs == 0 && duplicateTimes == 0, "\(duplicateIDs) duplicate ids, \(duplicateTimes) duplicate timestamps")
        let total = rows.count
        #expect(total >= k, "\(total) rows after the resume, \(k) before it")
        let ids = Set(rows.map(\.id))
        let lost = beforeRows.filter { !ids.contains($0.id) }
        let lostCount = lost.count
        let statusAfter = try await AgentStatus.read(db: db).raw
        #expect(
            lostCount == 0,
            """
            \(lostCount) of the \(k) rows stored before the kill are gone after the resume \
            (\(lost.first?.timestamp ?? "-") … \(lost.last?.timestamp ?? "-")); status after: \(statusAfter)
            """)
        let ordered = zip(rows, rows.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp }
        #expect(ordered, "not strictly in time order")

        // 5. The same track and config without interruption stores the same fixes.
        let refDB = tmp.path("reference.sqlite")
        let reference = try await AgentProcess.run(Self.trackArgs(Fixtures.walkGPX, speed: "max", db: refDB, config: config))
        #expect(reference.status == 0, "\(reference.stderr)")
        let refRows = try await HistoryRow.read(db: refDB)
        let refTotal = refRows.count
        #expect(total == refTotal, "resumed run stored \(total), an uninterrupted run \(refTotal)")
        let resumedTimes = rows.map(\.timestamp)
        let refTimes = refRows.map(\.timestamp)
        let firstDifference = zip(resumedTimes, refTimes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        let sameFixes = resumedTimes == refTimes
        #expect(
            sameFixes,
            "histories differ first at index \(firstDifference.map(String.init) ?? "end"): resumed \(resumedTimes.first ?? "-")…, uninterrupted \(refTimes.first ?? "-")…"
        )
    }

    /// Many kill/resume cycles in a row: every resume keeps the session and every row stored
    /// so far. (Cheap cycles — the resume is checked right after `resumed session` — so a
    /// race at resume time, which one long cycle hits only sometimes, shows up here.)
    @Test func repeatedKillResumeCyclesNeverLoseARow() async throws {
        let tmp = TempDir()
        let db = tmp.path("cycles.sqlite")
        let config = try tmp.gateOffConfig()
        let args = Self.trackArgs(Fixtures.walkGPX, speed: "50", db: db, config: config)

        let first = try AgentProcess(args)
        let session = try #require(
            try await first.waitForLine("the start line") { $0.hasPrefix("started session ") }.line.sessionIDFromStartLine)
        first.send(SIGKILL, atFirstLine: { (Progress.value("stored", in: $0) ?? 0) >= 50 })
        try await first.waitForLine("stored ≥ 50") { (Progress.value("stored", in: $0) ?? 0) >= 50 }
        _ = try await first.waitForExit(timeout: .seconds(30))
        let stored = try await HistoryRow.read(db: db)
        let storedIDs = Set(stored.map(\.id))
        #expect(stored.count >= 50)

        var failures: [String] = []
        for cycle in 1...8 {
            let p = try AgentProcess(args)
            let line = try await p.waitForLine("the start line") { $0.sessionIDFromStartLine != nil }.line
            // The resume (intent, gate, start-up prune) is complete once the line is printed.
            p.send(SIGKILL)
            _ = try await p.waitForExit(timeout: .seconds(30))
            let ids = Set(try await HistoryRow.read(db: db).map(\.id))
            let missing = storedIDs.subtracting(ids).count
            if line != "resumed session \(session)" { failures.append("cycle \(cycle): '\(line)'") }
            if missing > 0 {
                let status = try await AgentStatus.read(db: db)
                failures.append(
                    "cycle \(cycle): \(missing) of \(storedIDs.count) stored rows gone (aged_rows_total=\(status.raw["aged_rows_total"] ?? "?"))"
                )
                break
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "; "))")
    }

    /// SIGTERM (service stop) keeps the intent with stop reason `system`; the next start
    /// resumes. SIGINT clears it: the next start is a new session. `beekon stop` clears it too.
    @Test func sigtermKeepsIntentSigintAndStopClearIt() async throws {
        let tmp = TempDir()
        let db = tmp.path("signals.sqlite")
        let config = try tmp.gateOffConfig()
        // 413 fixes every 4 s at 10× ≈ 3 min: never reaches the end in this test.
        let args = Self.trackArgs(Fixtures.visnjanGPX, speed: "10", db: db, config: config)

        // SIGTERM: clean exit 0, intent kept, session closed with reason system.
        let first = try AgentProcess(args)
        let s1 = try #require(
            try await first.waitForLine("the start line") { $0.hasPrefix("started session ") }.line.sessionIDFromStartLine)
        try await first.waitForLine("a stored fix") { (Progress.value("stored", in: $0) ?? 0) >= 2 }
        first.send(SIGTERM)
        let terminated = try await first.waitForExit(timeout: .seconds(30))
        #expect(terminated.status == 0 && !terminated.signalled, "exit \(terminated.status): \(terminated.stderr)")
        #expect(terminated.stdout.contains { $0.hasPrefix("terminated") }, "\(terminated.stdoutText)")
        let afterTerm = try await AgentStatus.read(db: db)
        #expect(afterTerm.trackingIntent)
        #expect(afterTerm.sessionID == s1)
        let report = try await Beekon.inspect(databaseAt: db)
        #expect(report.trackingIntent?.wireString == s1)
        #expect(report.lastSessionStopReason == .system)

        // Next start resumes the same session; SIGINT then stops it for good.
        let second = try AgentProcess(args)
        let resumed = try await second.waitForLine("the start line") { $0.sessionIDFromStartLine != nil }
        #expect(resumed.line == "resumed session \(s1)")
        second.send(SIGINT)
        let interrupted = try await second.waitForExit(timeout: .seconds(30))
        #expect(interrupted.status == 0 && !interrupted.signalled, "exit \(interrupted.status): \(interrupted.stderr)")
        #expect(interrupted.stdout.contains("stopped"), "\(interrupted.stdoutText)")
        let afterInt = try await AgentStatus.read(db: db)
        #expect(!afterInt.trackingIntent)
        #expect(try await Beekon.inspect(databaseAt: db).lastSessionStopReason == .user)

        // A start after SIGINT is a new session.
        let third = try AgentProcess(args)
        let started = try await third.waitForLine("the start line") { $0.sessionIDFromStartLine != nil }
        #expect(started.line.hasPrefix("started session "), "\(started.line)")
        let s2 = try #require(started.line.sessionIDFromStartLine)
        #expect(s2 != s1)
        #expect(UUID(uuidString: s2) != nil)

        // SIGTERM keeps the intent again; `beekon stop --db` clears it.
        third.send(SIGTERM)
        let terminated2 = try await third.waitForExit(timeout: .seconds(30))
        #expect(terminated2.status == 0)
        #expect(try await AgentStatus.read(db: db).trackingIntent)
        let stop = try await AgentProcess.run(["stop", "--db", db], timeout: .seconds(30))
        #expect(stop.status == 0, "\(stop.stderr)")
        #expect(stop.stdout.contains("tracking intent cleared"))
        #expect(try await !AgentStatus.read(db: db).trackingIntent)

        // So the next start is again a new session.
        let fourth = try AgentProcess(args)
        let fresh = try await fourth.waitForLine("the start line") { $0.sessionIDFromStartLine != nil }
        #expect(fresh.line.hasPrefix("started session "), "\(fresh.line)")
        #expect(fresh.line.sessionIDFromStartLine != s2)
        fourth.send(SIGINT)
        #expect(try await fourth.waitForExit(timeout: .seconds(30)).status == 0)
    }
}
