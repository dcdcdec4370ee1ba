import Foundation

/// A value guarded by a lock: the one lock type of the SDK, its sources and the agent
/// (`Mutex` needs macOS 15; the package supports macOS 13).
package final class Locked<State>: @unchecked Sendable {
    private var state: State
    private let lock = NSLock()

    /// Guards `state`.
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state; never call out to other locks or `await` inside.
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// The state (a copy), or replaces it.
    package var value: State {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}
