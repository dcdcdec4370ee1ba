import BeekonIngest
import BeekonWire
import Foundation
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
                let process = Process()
                process.executableURL = Self.binary
                process.arguments = arguments
                let out = Pipe()
                let err = Pipe()
                process.standardOutput = out
                process.standardError = err
                try process.run()
                // stderr is small (a usage line); read stdout to its end first, then stderr.
                let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                return (process.terminationStatus, text, message)
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
            let process = Process()
            process.executableURL = binary
            process.arguments = ["--port", "0", "--log-level", "error"]
            process.currentDirectoryURL = dir
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
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
            kill(process.processIdentifier, SIGTERM)
            await blocking { process.waitUntilExit() }
            #expect(process.terminationReason == .exit)
            #expect(process.terminationStatus == 0)
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
