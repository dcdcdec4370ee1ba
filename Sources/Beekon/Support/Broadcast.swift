import Foundation

/// A hot, replay-1 multicast value (LC-3, FX-7): every subscriber first gets
/// the latest value (if any), then every later one. Any number of subscribers;
/// a subscriber that stops iterating is removed. Slow subscribers keep only the
/// newest `bufferLimit` values, so one stuck consumer never blocks tracking.
final class Broadcast<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var latest: Value?
    private var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
    private var nextID: UInt64 = 0
    private let bufferLimit: Int

    init(initial: Value? = nil, bufferLimit: Int = 1024) {
        latest = initial
        self.bufferLimit = bufferLimit
    }

    /// The latest value published.
    var current: Value? { lock.withLock { latest } }

    /// Publishes `value` to every subscriber and keeps it for new ones.
    func publish(_ value: Value) {
        let targets = lock.withLock {
            latest = value
            return Array(subscribers.values)
        }
        for c in targets { c.yield(value) }
    }

    /// A new subscription.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
        let id: UInt64 = lock.withLock {
            let id = nextID
            nextID += 1
            subscribers[id] = continuation
            if let latest { continuation.yield(latest) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription.
    func finish() {
        let targets = lock.withLock {
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for c in targets { c.finish() }
    }
}
