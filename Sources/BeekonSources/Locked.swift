import Foundation

/// A value guarded by a lock, for the small shared state of `ReplayClock`
/// (`Mutex` needs macOS 15; the package supports macOS 13).
final class Locked<State>: @unchecked Sendable {
    private var state: State
    private let lock = NSLock()

    init(_ state: State) { self.state = state }

    /// Runs `body` with exclusive access to the state; never call out to other locks or `await` inside.
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
