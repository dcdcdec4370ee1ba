import Foundation
import IngestLoopback
import ProcessSpawn
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process of the chaos harness and the Server tests (`beekon`, `beekon-ingest`,
/// `nginx`, …): stdout read line by line as it comes (and copied to `<name>.out`), stderr in
/// `<name>.out.err`, SIGKILL-able, and every wait — for a line, for the exit — woken by the
/// change itself (a `ChangeSignal`, or a condition for synchronous callers) and bounded.
package final class ChildProcess: @unchecked Sendable {
    /// How a finished process ended and what it printed.
    package struct Outcome: Sendable {
        /// The exit status, or the signal number when `signalled`.
        package var status: Int32
        /// Whether a signal ended it.
        package var signalled: Bool
        /// Everything it printed on stdout.
        package var stdout: String
        /// Everything it printed on stderr.
        package var stderr: String
        /// Session ids from `started session …` / `resumed session …` lines.
        package var sessions: [String] { ChildProcess.sessions(in: stdout) }
    }

    /// A process that did not finish in time (it was SIGKILLed).
    package struct Overrun: Error, CustomStringConvertible {
        /// What ran, and the tails of its output.
        package var description: String
    }

    /// The process (started).
    private let process: SpawnedProcess
    private let outPath: String
    private let errPath: String
    private let condition = NSCondition()
    private let changes = ChangeSignal()
    private var output: [UInt8] = []
    private var outputClosed = false
    private var killedByUs = false

    /// Starts `executable` with `arguments` in `directory`; output files are named after `name`.
    package init(_ executable: URL, _ arguments: [String], directory: String, name: String) throws {
        outPath = (directory as NSString).appendingPathComponent("\(name)-\(UUID().uuidString.prefix(6)).out")
        errPath = outPath + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        let copy = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        let pipe = Pipe()
        defer { try? err.close() }
        process = try SpawnedProcess(
            executable.path, arguments, directory: directory, stdout: pipe.fileHandleForWriting.fileDescriptor, stderr: err.fileDescriptor,
            onExit: { [condition, changes] _ in Self.changed(condition, changes) })
        try? pipe.fileHandleForWriting.close()
        let reader = pipe.fileHandleForReading
        Thread { [self] in
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                copy.write(chunk)
                condition.withLock { output += chunk }
                changed()
            }
            try? copy.close()
            try? reader.close()
            condition.withLock { outputClosed = true }
            changed()
        }.start()
    }

    /// Starts `executable` in `dir`.
    package convenience init(_ executable: URL, _ arguments: [String], dir: ChaosDir, name: String) throws {
        try self.init(executable, arguments, directory: dir.url.path, name: name)
    }

    /// Its process id.
    package var pid: Int32 { process.pid }
    /// The arguments it was started with.
    package var arguments: [String] { process.arguments }
    /// What it printed on stdout so far.
    package var stdout: String { condition.withLock { String(decoding: output, as: UTF8.self) } }
    /// What it printed on stderr so far.
    package var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }
    /// Whether it is still running.
    package var isRunning: Bool { process.isRunning }
    /// Whether `kill(_:)` signalled it.
    package var wasKilled: Bool { condition.withLock { killedByUs } }

    /// Sends `signal` (SIGKILL by default) if it still runs; false when it had already exited.
    @discardableResult
    package func kill(_ signal: Int32 = SIGKILL) -> Bool {
        // Marked with the signal under one lock, so whoever sees the exit it causes sees the mark,
        // and nobody sees a mark for a process that had already exited. (The reaper takes the
        // process's lock without this one, and calls back after releasing it: no lock cycle.)
        condition.withLock {
            let sent = process.signal(signal)
            if sent { killedByUs = true }
            return sent
        }
    }

    /// The first stdout line that `matches`, once printed; nil when the process exited
    /// without it or `timeout` passed.
    package func line(timeout: Duration, where matches: @escaping @Sendable (Substring) -> Bool) async -> String? {
        let found = try? await changes.wait(timeout: timeout) { [self] () -> String?? in
            let (text, closed) = condition.withLock { (String(decoding: output, as: UTF8.self), outputClosed) }
            if let line = text.split(separator: "\n").first(where: matches) { return .some(String(line)) }
            return closed && !process.isRunning ? .some(nil) : nil
        }
        return found ?? nil
    }

    /// Waits for the exit and the end of its output (bounded); false on overrun. Output still
    /// open 5 s after the exit (a descendant inherited stdout) is not waited for any longer.
    package func exited(timeout: Duration) async -> Bool {
        let gone = try? await changes.wait(timeout: timeout) { [self] in process.isRunning ? nil : true }
        guard gone == true else { return false }
        _ = try? await changes.wait(timeout: .seconds(5)) { [self] in condition.withLock { outputClosed } ? true : nil }
        return true
    }

    /// Waits for the exit (bounded); SIGKILLs and throws on overrun.
    package func finish(timeout: Duration) async throws -> Outcome {
        guard await exited(timeout: timeout) else {
            kill()
            throw Overrun(
                description: "\(arguments.prefix(2).joined(separator: " ")) did not finish within \(timeout); "
                    + "stdout:\n\(stdout.suffix(1500))\nstderr:\n\(stderr.suffix(1500))")
        }
        return outcome
    }

    /// The outcome of a process that has exited (status -1 while it runs).
    package var outcome: Outcome {
        let exit = process.exited ?? SpawnedProcess.Exit(status: -1, signalled: false)
        return Outcome(status: exit.status, signalled: exit.signalled, stdout: stdout, stderr: stderr)
    }

    /// Blocks (for synchronous callers, e.g. a `defer`) until it exited; its status (the
    /// signal number when killed), nil when `timeout` seconds passed first.
    package func waitForExit(timeout: Double) -> Int32? {
        process.waitForExit(until: Date(timeIntervalSinceNow: timeout))?.status
    }

    /// Session ids from `started session …` / `resumed session …` lines of an agent's stdout.
    package static func sessions(in stdout: String) -> [String] {
        stdout.split(separator: "\n").compactMap { line -> String? in
            for p in ["started session ", "resumed session "] where line.hasPrefix(p) { return String(line.dropFirst(p.count)) }
            return nil
        }
    }

    private func changed() { Self.changed(condition, changes) }

    /// Wakes the synchronous and the async waiters (also from the reaper, before `self` exists).
    private static func changed(_ condition: NSCondition, _ changes: ChangeSignal) {
        condition.withLock { condition.broadcast() }
        changes.signal()
    }
}
