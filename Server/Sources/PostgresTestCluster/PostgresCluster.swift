import Foundation
import IngestLoopback
import ProcessSpawn
#if canImport(Glibc)
    import Glibc
#endif

/// A throw-away PostgreSQL 15 cluster on a free loopback port, in a temp dir,
/// removed on `stop()`. `initdb` refuses root, so as root it runs as `postgres`.
/// Shared by the tests (fsync off) and the P4 benchmark (fsync on).
package final class PostgresCluster: Sendable {
    package static let binDir = ProcessInfo.processInfo.environment["BEEKON_PG_BIN"] ?? "/usr/lib/postgresql/15/bin"
    /// Set `BEEKON_SKIP_POSTGRES=1` (or name `postgres` in `BEEKON_SKIP_TAGS`, the fast test subset)
    /// to run only the SQLite cases.
    package static let skipped: Bool =
        ProcessInfo.processInfo.environment["BEEKON_SKIP_POSTGRES"] == "1" || skippedTags.contains("postgres")

    /// The tag names `BEEKON_SKIP_TAGS` lists (comma-separated, case-insensitive): the one
    /// parse of the variable in this package, used here and by the tests' `.skippable` trait.
    package static let skippedTags: Set<String> = Set(
        (ProcessInfo.processInfo.environment["BEEKON_SKIP_TAGS"] ?? "").lowercased()
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })

    package enum Failure: Error, CustomStringConvertible {
        case missingBinaries(String)
        case command(String, Int32, String)
        package var description: String {
            switch self {
            case .missingBinaries(let dir):
                return "PostgreSQL binaries not found in \(dir): apt-get install -y postgresql (or set BEEKON_SKIP_POSTGRES=1)"
            case .command(let cmd, let status, let output): return "\(cmd) exited \(status): \(output)"
            }
        }
    }

    package let dir: String
    package let port: Int
    package let user = "beekon"

    private init(dir: String, port: Int) {
        self.dir = dir
        self.port = port
    }

    /// Starts a new cluster (waits until it accepts connections); `fsync: false` for tests,
    /// `true` where durability costs must be measured.
    package static func start(fsync: Bool = false) throws -> PostgresCluster {
        guard FileManager.default.isExecutableFile(atPath: "\(binDir)/initdb") else { throw Failure.missingBinaries(binDir) }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let cluster = PostgresCluster(dir: dir, port: LoopbackSocket.freePort())
        if getuid() == 0 {
            try run("/bin/chown", ["postgres", dir])
        }
        try cluster.asOwner("\(binDir)/initdb", ["-D", "\(dir)/data", "-A", "trust", "-U", cluster.user, "--no-sync"])
        try cluster.launch(fsync: fsync)
        return cluster
    }

    /// Starts the server on the existing data directory (waits until it accepts connections).
    /// `max_connections` leaves room for a whole suite in parallel: each test's store may open
    /// up to 20 pooled connections besides its listener and side connections, and with some
    /// thirty PostgreSQL tests running at once 500 can be exceeded (the likely cause of three
    /// group-commit tests failing with a PSQLError in the same second of one full run).
    private func launch(fsync: Bool) throws {
        try asOwner(
            "\(Self.binDir)/pg_ctl",
            [
                "-D", "\(dir)/data", "-w", "-t", "60", "-l", "\(dir)/log",
                "-o", "-p \(port) -k \(dir) -c listen_addresses=127.0.0.1 -c fsync=\(fsync ? "on" : "off") -c max_connections=2000",
                "start",
            ])
    }

    /// Stops the server (fast shutdown: open connections are cut) and starts it again on the
    /// same port and data, as a database outage of the chaos harness; returns once it accepts
    /// connections. Blocks for the time the restart takes.
    package func restart(fsync: Bool = false) throws {
        try asOwner("\(Self.binDir)/pg_ctl", ["-D", "\(dir)/data", "-m", "fast", "-w", "-t", "60", "stop"])
        try launch(fsync: fsync)
    }

    /// Creates an empty database and returns its name.
    package func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try Self.run("\(Self.binDir)/createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, name])
        return name
    }

    /// Drops a database, closing its connections (to simulate a database outage).
    package func dropDatabase(_ name: String) throws {
        try Self.run(
            "\(Self.binDir)/psql",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", "postgres",
                "-c", "DROP DATABASE \(name) WITH (FORCE)",
            ])
    }

    /// The `--database` URL for `name`.
    package func url(_ name: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(name)?sslmode=disable" }

    /// Stops the server and deletes the directory.
    package func stop() {
        try? asOwner("\(Self.binDir)/pg_ctl", ["-D", "\(dir)/data", "-m", "fast", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func asOwner(_ tool: String, _ args: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + args)
        } else {
            try Self.run(tool, args)
        }
    }

    /// Runs a tool and waits for its exit, not for its output's end (`pg_ctl start` leaves the
    /// server running; it inherits no descriptor of this process but its stdin and output file).
    @discardableResult
    static func run(_ tool: String, _ args: [String]) throws -> String {
        let outPath = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-cmd-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let out = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard out >= 0 else { throw Failure.command(tool, errno, "cannot create \(outPath)") }
        let process: SpawnedProcess
        do {
            defer { close(out) }
            process = try SpawnedProcess(tool, args, directory: nil, stdout: out, stderr: out)
        } catch {
            throw Failure.command(tool, -1, "\(error)")
        }
        let exit = process.waitForExit()
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard let exit, !exit.signalled, exit.status == 0 else {
            throw Failure.command(([tool] + args).joined(separator: " "), exit.map { $0.signalled ? -1 : $0.status } ?? -1, output)
        }
        return output
    }
}
