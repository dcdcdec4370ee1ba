import Beekon
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// systemd's `sd_notify` protocol without libsystemd: datagrams to the
/// `AF_UNIX` socket named by `$NOTIFY_SOCKET` (a path, or `@name` for the
/// abstract namespace). Inactive (every call a no-op) when the variable is
/// unset, i.e. not started by systemd with `Type=notify`.
///
/// - `READY=1` once the SDK is tracking; `STATUS=…` with the fix count;
/// - `WATCHDOG=1` every half `$WATCHDOG_USEC` while the SDK actor answers
///   (a hung agent misses pings and systemd restarts it);
/// - `STOPPING=1` on SIGTERM.
struct ServiceNotifier: Sendable {
    /// The socket address, nil when inactive.
    let socketPath: String?
    /// The watchdog ping interval (half of `$WATCHDOG_USEC`), nil without a watchdog.
    let watchdogInterval: Duration?

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID` from the environment.
    static func fromEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) -> ServiceNotifier {
        let path = env["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        var interval: Duration?
        if let usecText = env["WATCHDOG_USEC"], let usec = Int64(usecText), usec > 0 {
            let pidMatches = env["WATCHDOG_PID"].flatMap(Int32.init).map { $0 == getpid() } ?? true
            if pidMatches { interval = .microseconds(usec / 2) }
        }
        return ServiceNotifier(socketPath: path, watchdogInterval: path == nil ? nil : interval)
    }

    var isActive: Bool { socketPath != nil }

    /// Sends one notification (`KEY=VALUE` lines); returns whether it was sent.
    @discardableResult
    func notify(_ message: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Self.datagram, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in pathBytes.enumerated() { raw[i] = b }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Self.noSignal, sa, length) }
            }
        }
        return sent == bytes.count
    }

    /// `READY=1` with a status line.
    func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }

    /// `STATUS=…`.
    func status(_ text: String) { notify("STATUS=\(text)") }

    /// `STOPPING=1` with a status line.
    func stopping(status: String) { notify("STOPPING=1\nSTATUS=\(status)") }

    /// Pings the watchdog and refreshes the status every half `WATCHDOG_USEC`
    /// (every 30 s without a watchdog) while the SDK actor answers; cancel the
    /// task to stop. Returns nil when inactive.
    func startHeartbeat(beekon: Beekon) -> Task<Void, Never>? {
        guard isActive else { return nil }
        let interval = watchdogInterval ?? .seconds(30)
        let watchdog = watchdogInterval != nil
        return Task {
            while !Task.isCancelled {
                // Awaiting the actor proves the SDK is not wedged before we vouch for it.
                let stats = await beekon.statistics
                let line = "\(beekon.currentState); \(stats.stored) fixes stored, \(stats.received) read"
                notify((watchdog ? "WATCHDOG=1\n" : "") + "STATUS=\(line)")
                try? await Task.sleep(for: interval)
            }
        }
    }

    #if canImport(Glibc)
        private static let datagram = Int32(SOCK_DGRAM.rawValue)
        private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
        private static let datagram = SOCK_DGRAM
        private static let noSignal: Int32 = 0
    #endif
}
