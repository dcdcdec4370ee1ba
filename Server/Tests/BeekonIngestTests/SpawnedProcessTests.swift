@testable import BeekonIngest
import Foundation
import ProcessSpawn
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The tests' and the chaos harness's child processes (`SpawnedProcess`, under `ChildProcess`):
/// started without Foundation's `Process`, whose Linux spawn read past `readdir`'s buffer with
/// over 1,700 descriptors open (a clean-clone CI run died of it).
@Suite struct SpawnedProcessTests {
    /// Runs `sh -c script` in `directory` to its end; its exit and stdout.
    private static func shell(_ script: String, directory: String? = nil) async throws -> (SpawnedProcess.Exit?, String) {
        try await blocking {
            let run = try SpawnedProcess.run("/bin/sh", ["-c", script], directory: directory)
            return (run.exit, run.stdout)
        }
    }

    @Test func aRunReturnsWhatItPrintedOnBothStreamsAndReadItsInput() async throws {
        // More than a pipe holds on stderr while stdout is still open: read one after the other,
        // the child would stall on stderr (`timeout` then ends it: exit 124, a failure, not a hang).
        let script = "head -c 200000 /dev/zero | tr '\\0' e >&2; cat; exit 3"
        let run = try await blocking {
            try SpawnedProcess.run("/usr/bin/timeout", ["60", "/bin/sh", "-c", script], input: Array("in".utf8))
        }
        #expect(run.exit == SpawnedProcess.Exit(status: 3, signalled: false))
        #expect(run.stdout == "in")
        #expect(run.stderr.count == 200_000 && run.stderr.allSatisfy { $0 == "e" })
    }

    @Test func withOverOneThousandThreeHundredDescriptorsOpenTheChildStartsAndInheritsNoneOfThem() async throws {
        // 1,400 descriptors without close-on-exec: more than readdir's buffer holds, and each
        // one a child would inherit unless the spawn closes it. The soft limit may be 1,024
        // until a server of another test raises it: raised here as a server does.
        _ = ConnectionLimit.raiseDescriptorLimit()
        let null = open("/dev/null", O_RDONLY)
        try #require(null >= 0)
        let held = (0..<1_400).map { _ in dup(null) }
        defer { (held + [null]).filter { $0 >= 0 }.forEach { close($0) } }
        try #require(held.allSatisfy { $0 >= 0 }, "the descriptor limit is below 1,400 more")
        let highest = held.max()!
        for _ in 0..<3 {
            let (exit, text) = try await Self.shell(
                "[ -e /proc/$$/fd/\(highest) ] && echo inherited || echo closed; ls /proc/$$/fd | wc -l")
            #expect(exit == SpawnedProcess.Exit(status: 0, signalled: false))
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(lines.first == "closed", "\(text)")
            // stdin, stdout, stderr, and at most the descriptors the shell and `ls` open themselves.
            #expect((Int(lines.last ?? "") ?? 99) <= 6, "\(text)")
        }
    }

    @Test func theChildStartsInItsDirectory() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let here = FileManager.default.currentDirectoryPath
        let (exit, text) = try await Self.shell("pwd -P", directory: dir.path)
        #expect(exit?.status == 0)
        #expect(text.trimmingCharacters(in: .newlines) == dir.resolvingSymlinksInPath().path)
        #expect(FileManager.default.currentDirectoryPath == here)
    }

    @Test func exitStatusesAndSignalsAreReportedAsTheyHappened() async throws {
        #expect(try await Self.shell("exit 7").0 == SpawnedProcess.Exit(status: 7, signalled: false))
        let sleeper = try SpawnedProcess("/bin/sleep", ["600"], directory: nil, stdout: 2, stderr: 2)
        #expect(sleeper.isRunning)
        #expect(sleeper.exited == nil)
        #expect(sleeper.signal(SIGKILL))
        let exit = await blocking { sleeper.waitForExit(until: Date(timeIntervalSinceNow: 60)) }
        #expect(exit == SpawnedProcess.Exit(status: SIGKILL, signalled: true))
        #expect(!sleeper.isRunning)
        // Reaped: its process id is no longer ours to signal.
        #expect(!sleeper.signal(SIGKILL))
    }

    @Test func aMissingExecutableIsAnErrorNotAChild() throws {
        #expect(throws: SpawnedProcess.Failure.self) {
            try SpawnedProcess("/nonexistent/beekon-nothing", [], directory: nil, stdout: 2, stderr: 2)
        }
        #expect(throws: SpawnedProcess.Failure.self) {
            try SpawnedProcess("/bin/sh", [], directory: "/nonexistent/dir", stdout: 2, stderr: 2)
        }
    }
}
