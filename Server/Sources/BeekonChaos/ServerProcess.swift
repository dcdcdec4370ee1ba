import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `beekon-ingest` as a child process on `--port 0`, so that it can be SIGKILLed and started
/// again on the same database: the chaos harness's server and the Server tests' one.
package struct ServerProcess: Sendable {
    /// Why the server did not come up.
    package struct StartFailure: Error, CustomStringConvertible {
        /// Its output.
        package var description: String
    }

    /// The process.
    package let child: ChildProcess
    /// The port it printed in its `listening on 127.0.0.1:<port>` line.
    package let port: Int

    /// Starts `binary` on `database` (a `--database` value: `sqlite:<path>` or a PostgreSQL
    /// URL) with `extra` arguments and waits (bounded) for its listening line. With
    /// `descriptorLimit` it runs under `ulimit -n` of that many descriptors (soft and hard), as a
    /// service manager's limit would.
    package static func start(
        binary: URL, database: String, directory: String, extra: [String] = [], descriptorLimit: Int? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> ServerProcess {
        let arguments = ["--port", "0", "--database", database, "--log-level", "error"] + extra
        let child: ChildProcess
        if let descriptorLimit {
            child = try ChildProcess(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"", binary.path] + arguments,
                directory: directory, name: "ingest")
        } else {
            child = try ChildProcess(binary, arguments, directory: directory, name: "ingest")
        }
        let prefix = "listening on 127.0.0.1:"
        guard let line = await child.line(timeout: timeout, where: { $0.hasPrefix(prefix) }),
            let port = Int(line.dropFirst(prefix.count))
        else {
            child.kill()
            throw StartFailure(description: "beekon-ingest did not start: \(child.stdout) \(child.stderr)")
        }
        return ServerProcess(child: child, port: port)
    }

    /// Wraps a started process.
    package init(child: ChildProcess, port: Int) {
        self.child = child
        self.port = port
    }

    /// Its process id.
    package var pid: Int32 { child.pid }
    /// Everything it printed.
    package var output: String { child.stdout + child.stderr }
    /// The base URL of its read API.
    package var base: String { "http://127.0.0.1:\(port)" }

    /// Waits for the exit; the signal number when killed, else the status; nil on overrun.
    package func waitForExit(timeout: Double) -> Int32? {
        child.waitForExit(timeout: timeout)
    }

    /// SIGTERM and wait; the exit status (nil if it had to be SIGKILLed).
    @discardableResult
    package func terminate() -> Int32? {
        guard child.isRunning else { return child.outcome.status }
        child.kill(SIGTERM)
        // A failure bound: under a CPU hog a graceful shutdown has taken more than 20 s.
        if let status = waitForExit(timeout: 90) { return status }
        child.kill()
        return nil
    }
}
