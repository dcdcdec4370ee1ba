import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A real `beekon-ingest` on a port the OS picks, auth off, until `stop()`.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let port: Int

    init(binary: String, database: String) throws {
        process.executableURL = URL(fileURLWithPath: binary)
        // The raw baseline reads every fix of the month in one query: give it time to finish.
        process.arguments = [
            "serve", "--port", "0", "--database", database, "--auth", "off", "--log-level", "error", "--database-timeout", "300",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("listening on") || !text.hasSuffix("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchFailure("beekon-ingest exited before listening") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on") }),
            let port = line.split(separator: ":").last.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        else {
            process.terminate()
            throw BenchFailure("no 'listening on' line from beekon-ingest: \(text)")
        }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// GETs with curl: an independent client that reports total time and bytes downloaded.
enum Curl {
    struct Result: Sendable {
        var seconds: Double
        var bytes: Int
    }

    static func get(_ url: String) throws -> Result {
        let text = try run(["-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}", url])
        let parts = text.split(separator: " ")
        guard parts.count == 3, parts[0] == "200", let s = Double(parts[1]), let b = Int(parts[2]) else {
            throw BenchFailure("GET \(url): \(text)")
        }
        return Result(seconds: s, bytes: b)
    }

    static func body(_ url: String) throws -> Data { Data(try run(["-s", url]).utf8) }

    static func run(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Median, min, max seconds and the median size in MB (10^6 bytes).
    static func summary(_ results: [Result]) -> (median: Double, min: Double, max: Double, megabytes: Double) {
        let s = results.map(\.seconds).sorted()
        let b = results.map(\.bytes).sorted()
        return (s[s.count / 2], s[0], s[s.count - 1], Double(b[b.count / 2]) / 1e6)
    }
}
