import BeekonIngest
import BeekonWire
import Foundation
import ProcessSpawn
import Testing
#if canImport(Glibc)
    import Glibc
#endif

extension Ingest {
    /// The `beekon-ingest` binary as an operator runs it: `--port 0` reports the port,
    /// SIGTERM stops it cleanly.
    @Suite struct Executable {
        static var binary: URL {
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("beekon-ingest")
        }

        /// Runs the binary to its end, off the cooperative pool; its exit status, standard output and error.
        static func run(_ arguments: [String]) async throws -> (status: Int32, out: String, err: String) {
            try await blocking {
                let run = try SpawnedProcess.run(Self.binary.path, arguments)
                return (run.exit.status, run.stdout, run.stderr)
            }
        }

        @Test func versionFlagPrintsTheOneVersionConstant() async throws {
            let (status, text, _) = try await Self.run(["--version"])
            #expect(status == 0)
            #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == BeekonVersion.current)
        }

        @Test func reportsItsPortAndStopsOnSIGTERM() async throws {
            let binary = Self.binary
            try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the executable first: \(binary.path)")
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-exe-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            let out = Pipe()
            let null = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/null"))
            // Started in `dir` by the child alone: the database file is created there.
            let process = try SpawnedProcess(
                binary.path, ["--port", "0", "--log-level", "error"], directory: dir.path,
                stdout: out.fileHandleForWriting.fileDescriptor, stderr: null.fileDescriptor)
            try out.fileHandleForWriting.close()
            try null.close()
            let line: String = await blocking {
                var text = ""
                while !text.contains("\n") {
                    let chunk = out.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }
            let port = try #require(
                line.split(separator: "\n").first.flatMap { l -> Int? in
                    guard l.hasPrefix("listening on 127.0.0.1:") else { return nil }
                    return Int(l.dropFirst("listening on 127.0.0.1:".count))
                }, "unexpected first line: \(line)")
            let health = try await HTTP.send("GET", "http://127.0.0.1:\(port)/healthz")
            #expect(health.status == 200)
            #expect(
                try await HTTP.send(
                    "POST", "http://127.0.0.1:\(port)/v1/locations",
                    body: [UInt8](WireJSONWriter.encode(Fixtures.envelope(Fixtures.locations(1)))),
                    headers: ["Content-Type": "application/json"]
                ).status == 200)
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("beekon-ingest.sqlite").path))
            process.signal(SIGTERM)
            // A failure bound: a clean stop takes well under a second.
            let exit = await blocking { process.waitForExit(until: Date(timeIntervalSinceNow: 60)) }
            if exit == nil { process.signal(SIGKILL) }
            #expect(exit == SpawnedProcess.Exit(status: 0, signalled: false))
        }

        @Test(arguments: ["0", "301", "ten"])
        func refusesADatabaseTimeoutOutOfRange(_ value: String) async throws {
            let (status, _, message) = try await Self.run(
                ["--port", "0", "--database", "sqlite:/nonexistent/never-created.sqlite", "--database-timeout", value])
            #expect(status == 64, "usage error: \(message)")
            // The option's own range check, or its integer parsing: not an unknown option.
            #expect(
                message.contains(value == "ten" ? "is invalid for '--database-timeout" : "--database-timeout must be 1 to 300"),
                "\(message)")
        }
    }
}
