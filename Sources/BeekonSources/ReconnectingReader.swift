import BeekonPrimitives
import Foundation
import Beekon
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a live source could not be opened or read.
struct ByteSourceError: Error, Sendable {
    /// One line for logs and the final error.
    var message: String
    /// Access was refused (EACCES/EPERM): reported as `permissionDenied` when the grace period ends.
    var permission = false
}

/// What `ReconnectingReader` drives: a gpsd socket or a serial device. Used
/// by one reader thread at a time (hence `@unchecked Sendable` in conformers).
protocol ByteSource: AnyObject, Sendable {
    /// A short name for messages, e.g. `gpsd at 127.0.0.1:2947`.
    var name: String { get }
    /// Whether end-of-file means "exhausted" (a regular file) rather than "gone".
    var endOfFileFinishes: Bool { get }
    /// Opens the source; returns a non-blocking descriptor.
    func open() throws(ByteSourceError) -> Int32
    /// Applies a power mode to an open descriptor (after open and on every change).
    func apply(_ mode: PowerMode, fd: Int32) throws(ByteSourceError)
    /// Bytes read; returns completed fixes. `now` is monotonic seconds.
    func consume(_ bytes: ArraySlice<UInt8>, now: Double) -> [RawFix]
    /// Called when nothing arrived for a while; may emit a settled epoch.
    func idle(now: Double) -> [RawFix]
    /// The descriptor was closed (EOF, error, stop); emits what is pending.
    func closed() -> [RawFix]
}

/// Runs a `ByteSource` on its own thread: open, read with `poll(2)`, reopen
/// with capped backoff, give up after the grace period (`ReconnectPolicy`).
/// Fixes and the outcome go to an `AsyncThrowingStream` continuation. Every
/// wait is a `poll` on a wake pipe, so `stop()` and power-mode changes act at once.
final class ReconnectingReader: Sendable {
    private struct Control {
        var stopped = false
        var mode: PowerMode
        var modeChanged = false
    }

    let source: any ByteSource
    let policy: ReconnectPolicy
    private let continuation: AsyncThrowingStream<RawFix, any Error>.Continuation
    private let onEvent: (@Sendable (LiveSourceEvent) -> Void)?
    private let control: Locked<Control>
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// Idle poll interval: how often `idle(now:)` runs while connected, in milliseconds.
    static let tickMillis: Int32 = 100

    init(
        source: any ByteSource, policy: ReconnectPolicy, mode: PowerMode,
        continuation: AsyncThrowingStream<RawFix, any Error>.Continuation,
        onEvent: (@Sendable (LiveSourceEvent) -> Void)?
    ) throws(ByteSourceError) {
        self.source = source
        self.policy = policy
        self.continuation = continuation
        self.onEvent = onEvent
        self.control = Locked(Control(mode: mode))
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ByteSourceError(message: "cannot create a wake pipe: \(Self.errnoText())") }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Starts the reader thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "beekon.source"
        thread.start()
    }

    /// Stops reading; the stream finishes normally.
    func stop() {
        control.withLock { $0.stopped = true }
        wake()
    }

    /// Changes the power mode; applied by the reader thread.
    func setMode(_ mode: PowerMode) {
        control.withLock {
            $0.mode = mode
            $0.modeChanged = true
        }
        wake()
    }

    private func wake() {
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
    }

    private var isStopped: Bool { control.withLock { $0.stopped } }

    private func run() {
        let name = source.name
        var downSince = Self.now()
        var backoff = policy.initialBackoff.seconds
        var lastError = "not connected yet"
        var permission = false
        while !isStopped {
            let fd: Int32
            do {
                fd = try source.open()
            } catch {
                lastError = error.message
                permission = error.permission
                let remaining = policy.gracePeriod.seconds - (Self.now() - downSince)
                if remaining <= 0 {
                    giveUp(lastError, permission: permission)
                    return
                }
                let wait = min(backoff, remaining)
                onEvent?(.attemptFailed(name, error: lastError, retryIn: wait))
                waitForWake(seconds: wait)
                backoff = min(backoff * 2, policy.maxBackoff.seconds)
                continue
            }
            onEvent?(.connected(name))
            let (reason, gotData) = serve(fd)
            close(fd)
            for fix in source.closed() { continuation.yield(fix) }
            if isStopped { break }
            if reason == nil, source.endOfFileFinishes {
                onEvent?(.ended(name))
                break
            }
            onEvent?(.disconnected(name, reason: reason ?? "end of file"))
            // A connection that delivered nothing (a dead pty, a socket closed at once)
            // does not restart the grace period: the source never really came back.
            if gotData {
                downSince = Self.now()
                backoff = policy.initialBackoff.seconds
            }
            if Self.now() - downSince >= policy.gracePeriod.seconds {
                giveUp(reason ?? "closed right after opening", permission: false)
                return
            }
            waitForWake(seconds: backoff)
            if !gotData { backoff = min(backoff * 2, policy.maxBackoff.seconds) }
        }
        continuation.finish()
    }

    /// Unreachable for the whole grace period: the stream throws.
    private func giveUp(_ lastError: String, permission: Bool) {
        let name = source.name
        let why = "unreachable for \(Self.format(policy.gracePeriod.seconds)) s (last error: \(lastError))"
        onEvent?(.gaveUp(name, reason: why))
        let failure: LocationProviderError = permission ? .permissionDenied : .servicesDisabled("\(name) \(why)")
        continuation.finish(throwing: failure)
    }

    /// Reads `fd` until EOF (nil), an error (its message) or stop (nil); also
    /// whether any byte arrived.
    private func serve(_ fd: Int32) -> (String?, Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var modeApplied = false
        var gotData = false
        while true {
            let (stopped, mode, changed) = control.withLock { c -> (Bool, PowerMode, Bool) in
                defer { c.modeChanged = false }
                return (c.stopped, c.mode, c.modeChanged)
            }
            if stopped { return (nil, gotData) }
            if changed || !modeApplied {
                do { try source.apply(mode, fd: fd) } catch { return (error.message, gotData) }
                modeApplied = true
            }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let n = poll(&fds, 2, Self.tickMillis)
            if n < 0 {
                if errno == EINTR { continue }
                return ("poll failed: \(Self.errnoText())", gotData)
            }
            if fds[1].revents != 0 { drainWake() }
            if fds[0].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    gotData = true
                    for fix in source.consume(buffer[0..<count], now: Self.now()) { continuation.yield(fix) }
                    continue
                }
                if count == 0 { return (nil, gotData) }
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                return ("read failed: \(Self.errnoText())", gotData)
            }
            for fix in source.idle(now: Self.now()) { continuation.yield(fix) }
        }
    }

    /// Waits up to `seconds` or until woken (stop, mode change).
    private func waitForWake(seconds: Double) {
        let deadline = Self.now() + seconds
        while !isStopped {
            let left = deadline - Self.now()
            if left <= 0 { return }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 1, Int32(min(left * 1000, 1_000).rounded(.up)))
            if n > 0 { drainWake() }
        }
    }

    private func drainWake() {
        var scratch = [UInt8](repeating: 0, count: 64)
        while scratch.withUnsafeMutableBytes({ read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Monotonic seconds.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
