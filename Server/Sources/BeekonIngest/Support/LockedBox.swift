import Foundation

/// A value behind a lock, for state set once at start-up and read per request.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func lockedAccess<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

extension LockedBox {
    /// Runs `body` with the value under the lock.
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lockedAccess(body)
    }
}
