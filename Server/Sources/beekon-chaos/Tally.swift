import Foundation

/// A trial's counters (faults injected, viewer connections, …) and the crashes it saw,
/// written from the proxy's threads, the agents' supervisors and the chaos loop.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private var crashList: [String] = []

    /// Adds `amount` to counter `kind`.
    func add(_ kind: String, _ amount: Int = 1) { lock.withLock { counts[kind, default: 0] += amount } }

    /// Records a process that died or misbehaved on its own.
    func crash(_ what: String) { lock.withLock { crashList.append(what) } }

    /// The counters so far.
    var snapshot: [String: Int] { lock.withLock { counts } }

    /// The crashes so far.
    var crashes: [String] { lock.withLock { crashList } }
}
