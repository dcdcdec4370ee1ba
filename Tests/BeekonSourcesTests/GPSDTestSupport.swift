import Foundation
import Testing
import Beekon
@testable import BeekonSources
#if canImport(Glibc)
    import Glibc
#endif

/// A real gpsd fed by `gpsfake` on a free loopback port. Tests that need it call
/// `GPSFake.available()`: missing gpsd is a test failure unless `BEEKON_SKIP_GPSD=1`.
final class GPSFake: @unchecked Sendable {
    static let gpsd = "/usr/sbin/gpsd"
    static let gpsfake = "/usr/bin/gpsfake"
    /// gpsfake must run on the system python (python3-gps), not a pyenv one.
    static let python = "/usr/bin/python3"

    /// Whether gpsd tests can run; records a failure when they cannot and skipping was not asked for.
    static func available(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let fm = FileManager.default
        let missing = [gpsd, gpsfake, python].filter { !fm.isExecutableFile(atPath: $0) }
        if missing.isEmpty { return true }
        if ProcessInfo.processInfo.environment["BEEKON_SKIP_GPSD"] == "1" { return false }
        Issue.record(
            "gpsd test needs \(missing.joined(separator: ", ")) (apt-get install gpsd gpsd-clients python3-gps), or set BEEKON_SKIP_GPSD=1",
            sourceLocation: sourceLocation)
        return false
    }

    let port: Int
    private let process = Process()
    private let exited: AsyncStream<Void>

    /// Starts `gpsfake -1 -q -P port -c cycle log`.
    init(log: String, port: Int, cycle: Double) throws {
        self.port = port
        process.executableURL = URL(fileURLWithPath: Self.python)
        // Test threads block most signals and a spawned child inherits that mask:
        // unblock, then exec, so gpsd behaves as it would under a shell.
        // Its own session, so stop() can kill gpsfake and its gpsd together.
        let unblock =
            "import os, signal, sys\nsignal.pthread_sigmask(signal.SIG_SETMASK, [])\n"
            + "try:\n    os.setpgid(0, 0)\nexcept OSError:\n    pass\n"
            + "signal.signal(signal.SIGPIPE, signal.SIG_DFL)\nos.execv(sys.argv[1], sys.argv[1:])\n"
        process.arguments = ["-c", unblock, Self.python, Self.gpsfake, "-1", "-q", "-P", String(port), "-c", String(cycle), log]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        exited = stream
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
    }

    /// SIGKILL to gpsfake's process group (gpsfake and its gpsd: "gone" at once, as
    /// in a crash) and wait for gpsfake's exit. (gpsfake catches SIGTERM and may
    /// linger after the log ends, so it is not used.)
    func stop() async throws {
        let pid = process.processIdentifier
        if process.isRunning {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        try await Deadline.run(.seconds(20), "gpsfake exit") { [exited] in
            for await _ in exited {}
        }
    }

    deinit {
        let pid = process.processIdentifier
        if process.isRunning {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
    }

    /// A TCP port that was free a moment ago.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}

/// Events in arrival order.
final class EventLog: @unchecked Sendable {
    private var events: [LiveSourceEvent] = []
    private let lock = NSLock()
    func append(_ e: LiveSourceEvent) { lock.withLock { events.append(e) } }
    var all: [LiveSourceEvent] { lock.withLock { events } }
}

/// Bounded waits: the deadline is a failure, never a synchronisation point.
enum Deadline {
    struct Expired: Error, CustomStringConvertible { var description: String }

    static func run<T: Sendable>(
        _ limit: Duration, _ what: String,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw Expired(description: "timed out after \(limit) waiting for \(what)")
            }
            return value
        }
    }
}

/// Consumes a provider's stream and its events; tests wait on what arrived.
actor StreamCollector {
    private(set) var fixes: [RawFix] = []
    private nonisolated let eventLog = EventLog()
    var events: [LiveSourceEvent] { eventLog.all }
    private(set) var outcome: Result<Void, any Error>?
    private var waiters: [(id: Int, check: @Sendable (StreamCollector.Snapshot) -> Bool, c: CheckedContinuation<Void, Never>)] = []
    private var nextID = 0

    struct Snapshot: Sendable {
        var fixes: [RawFix]
        var events: [LiveSourceEvent]
        var finished: Bool
    }

    var snapshot: Snapshot { Snapshot(fixes: fixes, events: events, finished: outcome != nil) }

    nonisolated func eventHandler() -> @Sendable (LiveSourceEvent) -> Void {
        { [eventLog] event in
            eventLog.append(event)  // synchronously, so events keep their order relative to the stream
            Task { await self.eventArrived() }
        }
    }

    /// Starts consuming `stream` in a task.
    nonisolated func consume(_ stream: AsyncThrowingStream<RawFix, any Error>) {
        Task {
            do {
                for try await fix in stream { await self.add(fix) }
                await self.finish(.success(()))
            } catch {
                await self.finish(.failure(error))
            }
        }
    }

    func add(_ fix: RawFix) {
        fixes.append(fix)
        check()
    }
    func eventArrived() { check() }
    func finish(_ r: Result<Void, any Error>) {
        outcome = r
        check()
    }

    /// Waits (bounded) until `condition` holds; throws with the state on timeout or
    /// when the stream ends without it.
    func wait(
        _ what: String, timeout: Duration = .seconds(30),
        _ condition: @escaping @Sendable (Snapshot) -> Bool
    ) async throws {
        do {
            try await Deadline.run(timeout, what) { [self] in
                await self.suspend(until: condition)
            }
        } catch {
            let s = snapshot
            throw Deadline.Expired(
                description:
                    "\(error): \(s.fixes.count) fixes (last \(String(describing: s.fixes.last?.timestamp))), events \(s.events.suffix(6)), outcome \(String(describing: outcome))"
            )
        }
        let s = snapshot
        if !condition(s) {
            throw Deadline.Expired(
                description:
                    "stream ended before \(what): \(s.fixes.count) fixes, events \(s.events), outcome \(String(describing: outcome))")
        }
    }

    private func suspend(until condition: @escaping @Sendable (Snapshot) -> Bool) async {
        if condition(snapshot) || outcome != nil { return }
        nextID += 1
        let id = nextID
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in waiters.append((id, condition, c)) }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        if let i = waiters.firstIndex(where: { $0.id == id }) { waiters.remove(at: i).c.resume() }
    }

    private func check() {
        let s = snapshot
        let ready = waiters.filter { $0.check(s) || outcome != nil }
        waiters.removeAll { w in ready.contains { $0.id == w.id } }
        for w in ready { w.c.resume() }
    }
}

extension RawFix {
    /// Milliseconds since midnight UTC: gpsd 3.22 may shift old logs' dates by 1024 weeks.
    var millisOfDay: Int64 {
        let ms = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
        return ((ms % 86_400_000) + 86_400_000) % 86_400_000
    }
}

/// Writes the first `count` lines of a shared NMEA log (lines `from..<from+count`) to a temp file.
func nmeaSlice(_ relative: String, from: Int = 0, count: Int, dir: URL) throws -> URL {
    let text = String(decoding: try SharedData.data(relative), as: UTF8.self)
    let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).dropFirst(from).prefix(count)
    let url = dir.appendingPathComponent("slice-\(from)-\(count)-\(URL(fileURLWithPath: relative).lastPathComponent)")
    try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// A fresh temporary directory.
func makeTempDir(_ name: String = #function) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("beekon-src-\(name.filter(\.isLetter).prefix(30))-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The parser's fixes for a whole file (the expected epochs).
func parsedFixes(_ url: URL) throws -> [RawFix] {
    var parser = NMEAParser()
    let data = try Data(contentsOf: url)
    return parser.feed(data) + parser.finish()
}
