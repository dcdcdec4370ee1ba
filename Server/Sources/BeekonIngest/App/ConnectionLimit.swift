import BeekonPrimitives
import Foundation
import NIOCore
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's cap on open connections, derived from the file-descriptor limit so that
/// the database, the log and the accept loop always keep descriptors of their own (issue
/// 28, finding 1: 1,100 trickling connections at a 1,024-descriptor limit starved SQLite
/// and crashed the process).
///
/// A connection accepted beyond the cap gets `503` with `Retry-After: 1` and is closed at
/// once; it holds its descriptor for that moment only. The count goes down when a
/// connection closes, whatever closed it (the peer, a head or idle timeout, a refusal).
///
/// Under the cap, one client address holds at most ``perClient`` connections (issue 50: one
/// client holding all 192 slots at `ulimit -n 256` by trickling and renewing its connections
/// got every other client a 503, `/healthz` included); a connection over it is refused the same way.
final class ConnectionLimit: Sendable {
    private struct Counts {
        var open = 0
        var refused = 0
        var refusedPerClient = 0
        var byClient: [String: Int] = [:]
    }

    /// The most connections open at once.
    let maximum: Int
    /// The most connections one client address holds at once.
    let perClient: Int
    private let counts = Locked(Counts())

    /// A cap of `maximum` connections (at least 1), `perClient` of them per address (nil:
    /// ``perClient(forMaximum:)``; at most `maximum`).
    init(maximum: Int, perClient: Int? = nil) {
        self.maximum = max(1, maximum)
        self.perClient = min(self.maximum, max(1, perClient ?? Self.perClient(forMaximum: self.maximum)))
    }

    /// The per-address cap for a cap of `maximum`: all but `max(8, maximum / 8)` slots, so that
    /// other clients always find some (192 → 168, 896 → 784, 57,344 → 50,176).
    static func perClient(forMaximum maximum: Int) -> Int { max(1, maximum - max(8, maximum / 8)) }

    /// Takes a slot for a connection from `client` (nil: an unknown address, counted only
    /// against the cap); false (and counted as refused) when every slot, or every slot of
    /// that address, is taken.
    func admit(client: String? = nil) -> Bool {
        counts.withLock { c in
            guard c.open < maximum else {
                c.refused += 1
                return false
            }
            if let client {
                guard c.byClient[client, default: 0] < perClient else {
                    c.refused += 1
                    c.refusedPerClient += 1
                    return false
                }
                c.byClient[client, default: 0] += 1
            }
            c.open += 1
            return true
        }
    }

    /// Gives a slot back (its connection closed).
    func release(client: String? = nil) {
        counts.withLock { c in
            c.open = max(0, c.open - 1)
            if let client, let held = c.byClient[client] { c.byClient[client] = held > 1 ? held - 1 : nil }
        }
    }

    /// Connections open now.
    var open: Int { counts.withLock { $0.open } }

    /// Prometheus series: open connections, the caps, connections refused at them.
    func metricsText() -> String {
        let (open, refused, perClientRefused) = counts.withLock { ($0.open, $0.refused, $0.refusedPerClient) }
        return """
            # HELP beekon_connections_open Open client connections.
            # TYPE beekon_connections_open gauge
            beekon_connections_open \(open)
            # HELP beekon_connections_max The connection cap (--max-connections, or derived from the descriptor limit).
            # TYPE beekon_connections_max gauge
            beekon_connections_max \(maximum)
            # HELP beekon_connections_refused_total Connections answered 503 and closed because the cap was reached.
            # TYPE beekon_connections_refused_total counter
            beekon_connections_refused_total \(refused)
            # HELP beekon_connections_per_client_max The most connections one client address holds (--max-connections-per-client).
            # TYPE beekon_connections_per_client_max gauge
            beekon_connections_per_client_max \(perClient)
            # HELP beekon_connections_refused_per_client_total Connections refused because their address held its share of the cap.
            # TYPE beekon_connections_refused_per_client_total counter
            beekon_connections_refused_per_client_total \(perClientRefused)

            """
    }

    /// What a connection over the cap is sent before it is closed.
    static let refusal = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nretry-after: 1\r\nconnection: close\r\n\r\n"

    /// The cap for a descriptor limit: the limit less a reserve of `max(64, limit / 8)`
    /// descriptors for the database files, the PostgreSQL pool, the event loops and the
    /// listening socket (256 → 192, 1,024 → 896, 65,536 → 57,344).
    static func derived(fromDescriptorLimit limit: Int) -> Int {
        max(16, limit - max(64, limit / 8))
    }

    /// The listen backlog when none is configured: the kernel's own ceiling
    /// (`/proc/sys/net/core/somaxconn`, which Linux silently applies to any larger value), or
    /// 4,096 where it cannot be read. Hummingbird's default of 256 overflowed when thousands
    /// of viewers connected at once: the kernel then drops the handshake's last ACK, and each
    /// such connection waits for a SYN-ACK retransmission (1 s, 3 s, 7 s, …) before it is
    /// accepted (issue 32).
    static func defaultListenBacklog(somaxconnPath: String = "/proc/sys/net/core/somaxconn") -> Int {
        guard let text = try? String(contentsOfFile: somaxconnPath, encoding: .utf8),
            let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0
        else { return 4_096 }
        return value
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit (capped at 1,048,576) and returns
    /// the soft limit in force afterwards (the old one when it cannot be raised).
    static func raiseDescriptorLimit() -> Int {
        var limits = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limits) == 0 else { return 1_024 }
        let ceiling: rlim_t = 1 << 20
        let target = min(limits.rlim_max, ceiling)  // RLIM_INFINITY is the largest value
        if limits.rlim_cur < target {
            var raised = limits
            raised.rlim_cur = target
            if setrlimit(resource, &raised) == 0 { return Int(target) }
        }
        return Int(min(limits.rlim_cur, ceiling))
    }
}
