import Beekon
import BeekonPrimitives
import Foundation

/// Readings delivered by the platform (CoreLocation's `didRange` callbacks) waiting for the
/// ranging wake that consumes them (SPEC BY-5). One consumer; ``next()`` returns nil when
/// its task is cancelled (the wake's deadline won the race) without losing later readings.
public final class BeaconReadingBuffer: Sendable {
    private struct State {
        var queue: [BeaconReading] = []
        var waiter: (id: UInt64, continuation: CheckedContinuation<BeaconReading?, Never>)?
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Creates an empty buffer.
    public init() {}

    /// Adds readings, waking the consumer.
    public func push(_ readings: [BeaconReading]) {
        guard !readings.isEmpty else { return }
        let handoff: (CheckedContinuation<BeaconReading?, Never>, BeaconReading)? = state.withLock { s in
            s.queue += readings
            guard let waiter = s.waiter else { return nil }
            s.waiter = nil
            return (waiter.continuation, s.queue.removeFirst())
        }
        if let (continuation, reading) = handoff { continuation.resume(returning: reading) }
    }

    /// Drops every reading not yet consumed (a new wake must not take an earlier wake's leftovers).
    public func reset() {
        state.withLock { $0.queue.removeAll() }
    }

    /// How many readings wait.
    public var count: Int { state.withLock { $0.queue.count } }

    /// The next reading, waiting for one; nil when the task is cancelled.
    public func next() async -> BeaconReading? {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<BeaconReading?, Never>) in
                enum Outcome {
                    case reading(BeaconReading)
                    case cancelled
                    case waiting
                }
                let outcome: Outcome = state.withLock { s in
                    if !s.queue.isEmpty { return .reading(s.queue.removeFirst()) }
                    if Task.isCancelled { return .cancelled }
                    s.waiter = (id, c)
                    return .waiting
                }
                switch outcome {
                case .reading(let r): c.resume(returning: r)
                case .cancelled: c.resume(returning: nil)
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<BeaconReading?, Never>? in
                guard let w = s.waiter, w.id == id else { return nil }
                s.waiter = nil
                return w.continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}
