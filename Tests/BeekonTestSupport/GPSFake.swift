import Foundation
import Testing
#if canImport(Glibc)
    import Glibc
#endif

// gpsd runs as a child process (Foundation `Process`), which exists on Linux and macOS, not on iOS;
// on iOS a stand-in keeps the suites compiling for the simulator (.github/workflows/apple.yml).
#if os(Linux) || os(macOS)
    /// A real gpsd fed by `gpsfake` on a free loopback port. Tests that need it call
    /// `GPSFake.available()`: missing gpsd is a test failure unless `BEEKON_SKIP_GPSD=1`.
    public final class GPSFake: @unchecked Sendable {
        /// Debian's gpsd (package gpsd).
        public static let gpsd = "/usr/sbin/gpsd"
        /// gpsfake (package gpsd-clients), which starts its own gpsd and feeds it a log.
        public static let gpsfake = "/usr/bin/gpsfake"
        /// gpsfake must run on the system python (python3-gps), not a pyenv one.
        public static let python = "/usr/bin/python3"

        /// Whether gpsd tests can run; records a failure when they cannot and skipping was not asked for.
        public static func available(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
            let fm = FileManager.default
            let missing = [gpsd, gpsfake, python].filter { !fm.isExecutableFile(atPath: $0) }
            if missing.isEmpty { return true }
            if ProcessInfo.processInfo.environment["BEEKON_SKIP_GPSD"] == "1" { return false }
            Issue.record(
                "gpsd test needs \(missing.joined(separator: ", ")) (apt-get install gpsd gpsd-clients python3-gps), or set BEEKON_SKIP_GPSD=1",
                sourceLocation: sourceLocation)
            return false
        }

        /// The port gpsd listens on.
        public let port: Int
        private let process = Process()
        private let exited: AsyncStream<Void>

        /// Starts `gpsfake -1 -q -P port -c cycle log`.
        public init(log: String, port: Int, cycle: Double) throws {
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
        public func stop() async throws {
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
    }
#else
    /// iOS has no child processes: the gpsd tests cannot run there. The same API, so the suites that
    /// use it still compile for the iOS simulator; `available()` is false, as with `BEEKON_SKIP_GPSD=1`.
    public final class GPSFake: Sendable {
        /// Debian's gpsd (package gpsd).
        public static let gpsd = "/usr/sbin/gpsd"
        /// gpsfake (package gpsd-clients).
        public static let gpsfake = "/usr/bin/gpsfake"
        /// The system python.
        public static let python = "/usr/bin/python3"

        /// Always false on iOS.
        public static func available(sourceLocation: SourceLocation = #_sourceLocation) -> Bool { false }

        /// The port gpsd would listen on.
        public let port: Int

        /// Throws: there is no gpsfake to start.
        public init(log: String, port: Int, cycle: Double) throws { throw CocoaError(.featureUnsupported) }

        /// Nothing to stop.
        public func stop() async throws {}
    }
#endif
