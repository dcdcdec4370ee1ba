import Foundation

/// How long the host lets the SDK keep working: on iOS a background task
/// (`beginBackgroundTask` / `backgroundTimeRemaining`), on Linux unlimited.
///
/// Work that must not be cut off mid-way by the OS (an upload, a ranging window)
/// asks for a lease first, checks ``ExecutionLease/remaining()`` as it goes, stops
/// cleanly a safety margin before the lease runs out, and ends the lease. The
/// decisions (how much margin, when to stop) live in platform-neutral code such as
/// ``ExecutionWindow``; an implementation of this protocol only talks to the host.
public protocol ExecutionBudget: Sendable {
    /// Asks the host for time to run a piece of work named `name` (shown in the
    /// system's diagnostics on Apple platforms). Never fails: a host that grants no
    /// time returns a lease whose ``ExecutionLease/remaining()`` is zero.
    func beginLease(named name: String) async -> any ExecutionLease
}

/// One granted stretch of running time; end it as soon as the work is done.
public protocol ExecutionLease: Sendable {
    /// Running time left before the host suspends or kills the process; `nil` means
    /// unlimited (Linux, an app in the foreground).
    func remaining() async -> Duration?
    /// Tells the host the work is over. Idempotent; must be called before expiry.
    func end() async
}

/// The budget of a process nothing suspends (Linux, macOS command-line tools).
public struct UnlimitedExecutionBudget: ExecutionBudget {
    /// Creates the unlimited budget.
    public init() {}
    /// A lease with no limit.
    public func beginLease(named name: String) async -> any ExecutionLease { UnlimitedLease() }

    private struct UnlimitedLease: ExecutionLease {
        func remaining() async -> Duration? { nil }
        func end() async {}
    }
}

/// The platform-neutral rule for working inside a lease: keep a safety margin
/// before the host's expiry and say how long the work may still run.
public struct ExecutionWindow: Sendable, Equatable {
    /// Time kept in reserve before expiry to stop, persist and end the lease.
    public var safetyMargin: Duration

    /// Creates a window rule; the default margin is 5 s (iOS warns about, then kills,
    /// an app whose background task is still running at expiry).
    public init(safetyMargin: Duration = .seconds(5)) {
        self.safetyMargin = safetyMargin
    }

    /// How long work may continue given the lease's `remaining` time: `nil` for
    /// unlimited, `.zero` when it must stop now.
    public func allowance(remaining: Duration?) -> Duration? {
        guard let remaining else { return nil }
        let left = remaining - safetyMargin
        return left > .zero ? left : .zero
    }
}
