import CSpawn
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process of the Server tests and tools, started with `posix_spawn(3)`, not
/// Foundation's `Process`: on Linux (swift-corelibs-foundation) that lists `/proc/self/fd` to
/// close every descriptor in the child, copying each `readdir(3)` entry's whole 256-byte
/// `d_name`, which reads past `readdir`'s buffer once about 1,300 descriptors are open. A test
/// process that runs many tests at once gets there: a clean-clone CI run died of it (`Bad
/// pointer dereference` in `memcpy` under `Process.run()`, with over 1,700 descriptors open).
///
/// Here the child closes every descriptor it is not given itself (`close_range`) and changes
/// directory itself, and the exit is reaped by a thread of its own, which marks it exited
/// before the process id is released: `signal(_:)` never reaches a recycled process id. The
/// child stays in this process's process group (Foundation gives it its own), so an interrupt
/// of the group reaches it too and leaves no orphan.
package final class SpawnedProcess: @unchecked Sendable {
    /// How it ended.
    package struct Exit: Sendable, Equatable {
        /// The exit status, or the signal number when `signalled`.
        package var status: Int32
        /// Whether a signal ended it.
        package var signalled: Bool

        /// An exit with `status`, or by signal number `status` when `signalled`.
        package init(status: Int32, signalled: Bool) {
            self.status = status
            self.signalled = signalled
        }

        /// The exit a `waitpid(2)` status describes (`WIFEXITED`/`WEXITSTATUS`, else `WTERMSIG`).
        init(waitStatus: Int32) {
            let signal = waitStatus & 0x7f
            self.init(status: signal == 0 ? (waitStatus >> 8) & 0xff : signal, signalled: signal != 0)
        }
    }

    /// A run to the end: how it ended and everything it printed.
    package struct Finished: Sendable {
        /// How it ended.
        package var exit: Exit
        /// Its standard output.
        package var stdout: String
        /// Its standard error.
        package var stderr: String
    }

    /// A spawn that failed (the executable missing or not executable, among others).
    package struct Failure: Error, CustomStringConvertible {
        /// What could not be started, and `strerror` of the cause.
        package var description: String
    }

    /// Its process id.
    package let pid: pid_t
    /// The arguments it was started with (without the executable).
    package let arguments: [String]
    private let condition = NSCondition()
    private var exit: Exit?  // guarded by `condition`

    /// Starts `executable` with `arguments`, in `directory` (nil: this process's), with these
    /// descriptors as its stdin (nil: `/dev/null`), stdout and stderr and no other descriptor
    /// inherited; `onExit` runs on the reaping thread once it has exited. The caller closes its
    /// own copies of pipe ends the child writes to, or it never reads their end.
    package convenience init(
        _ executable: String, _ arguments: [String], directory: String?, stdin: Int32? = nil, stdout: Int32, stderr: Int32,
        onExit: (@Sendable (Exit) -> Void)? = nil
    ) throws {
        let null = stdin == nil ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1
        defer { if null >= 0 { close(null) } }
        try self.init(executable, arguments, directory: directory, descriptors: [stdin ?? null, stdout, stderr], onExit: onExit)
    }

    /// Starts `executable` with `arguments` in `directory` (nil: this process's); the child's
    /// descriptor i is `descriptors[i]`, and it inherits no other.
    package init(
        _ executable: String, _ arguments: [String], directory: String?, descriptors: [Int32],
        onExit: (@Sendable (Exit) -> Void)? = nil
    ) throws {
        self.arguments = arguments
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        // Every source above the child's numbers, so no dup2 in the child overwrites a later one.
        var duplicateError: Int32 = 0
        let sources = descriptors.map { fd -> Int32 in
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, Int32(descriptors.count))
            if copy < 0 && duplicateError == 0 { duplicateError = errno }
            return copy
        }
        defer {
            (argv + envp).forEach { free($0) }
            sources.filter { $0 >= 0 }.forEach { close($0) }
        }
        if let bad = sources.firstIndex(of: -1) {
            throw Failure(
                description: "cannot start \(executable): descriptor \(descriptors[bad]): \(String(cString: strerror(duplicateError)))")
        }
        var pid: pid_t = 0
        let error = beekon_spawn(&pid, executable, argv, envp, directory, sources, Int32(sources.count))
        guard error == 0 else {
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(error)))")
        }
        self.pid = pid
        Thread { [self] in reap(onExit) }.start()
    }

    /// Whether it has not exited yet.
    package var isRunning: Bool { exited == nil }

    /// How it ended; nil while it runs.
    package var exited: Exit? { condition.withLock { exit } }

    /// Sends `signal` unless it has exited; false when it had (or `kill(2)` failed).
    @discardableResult
    package func signal(_ signal: Int32) -> Bool {
        condition.withLock { exit == nil && kill(pid, signal) == 0 }
    }

    /// Blocks the calling thread (never one of Swift's shared pool) until it exited, or until
    /// `deadline` (nil: none); how it ended, nil at the deadline.
    package func waitForExit(until deadline: Date? = nil) -> Exit? {
        condition.lock()
        defer { condition.unlock() }
        while exit == nil {
            // Not `wait(until: .distantFuture)`: Foundation traps converting it to a timespec.
            guard let deadline else {
                condition.wait()
                continue
            }
            guard condition.wait(until: deadline) else { return exit }
        }
        return exit
    }

    /// Runs `executable` to its end with `input` on its stdin, and returns what it printed; blocks
    /// the calling thread (never one of Swift's shared pool). Its stderr is read on a thread of
    /// its own while stdout is read here, so neither pipe can fill up and stall it.
    package static func run(
        _ executable: String, _ arguments: [String], directory: String? = nil, input: [UInt8] = []
    ) throws -> Finished {
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        let process = try SpawnedProcess(
            executable, arguments, directory: directory, stdin: stdin.fileHandleForReading.fileDescriptor,
            stdout: stdout.fileHandleForWriting.fileDescriptor, stderr: stderr.fileHandleForWriting.fileDescriptor)
        // Only the child holds these ends now: its exit ends the reads below.
        try stdin.fileHandleForReading.close()
        try stdout.fileHandleForWriting.close()
        try stderr.fileHandleForWriting.close()
        let errors = ErrorOutput()
        let errorsRead = DispatchSemaphore(value: 0)
        Thread {
            errors.bytes = stderr.fileHandleForReading.readDataToEndOfFile()
            errorsRead.signal()
        }.start()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        errorsRead.wait()
        return Finished(
            exit: process.waitForExit() ?? Exit(status: -1, signalled: false), stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: errors.bytes, as: UTF8.self))
    }

    /// Stderr as read by `run`'s reader thread; read by the caller after the semaphore.
    private final class ErrorOutput: @unchecked Sendable {
        var bytes = Data()
    }

    private func reap(_ onExit: (@Sendable (Exit) -> Void)?) {
        // Wait without reaping, so the process id stays ours until `exit` is set under the lock.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        let ended: Exit = condition.withLock {
            var status: Int32 = 0
            var reaped = waitpid(pid, &status, 0)
            while reaped == -1, errno == EINTR { reaped = waitpid(pid, &status, 0) }
            // -1: reaped by someone else (SIGCHLD ignored, say), its status unknown.
            let ended = reaped == -1 ? Exit(status: -1, signalled: false) : Exit(waitStatus: status)
            exit = ended
            condition.broadcast()
            return ended
        }
        onExit?(ended)
    }
}
