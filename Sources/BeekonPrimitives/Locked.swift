import Foundation

/// A value guarded by a lock: the one lock type of the SDK, its sources, the agent and the
/// ingest server (`Mutex` needs macOS 15; the package supports macOS 13). Its `withLock` has
/// the shape of `Mutex.withLock` and swift-nio's `NIOLockedValueBox.withLockedValue`.
public final class Locked<State>: @unchecked Sendable {
    private var state: State
    private let lock = NSLock()

    /// Guards `state`.
    public init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state; never call out to other locks or `await` inside.
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// The state (a copy), or replaces it.
    public var value: State {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}
