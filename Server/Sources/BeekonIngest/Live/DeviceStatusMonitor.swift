import BeekonWire
import Foundation
import Logging
import ServiceLifecycle

/// Recomputes every device's `DeviceStatus` every `interval` and right after an ingest,
/// and publishes the changes as `device` events (the store writes a change only when it
/// differs from the stored status, so several instances publish each change once).
final class DeviceStatusMonitor: Service, Sendable {
    let store: any LocationStore
    let defaultExpectedSeconds: Int
    let interval: Duration
    let now: @Sendable () -> Date
    let logger: Logger
    let onPublished: @Sendable () -> Void
    private let known = LockedBox([UUID: DeviceStatus]())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init(
        store: any LocationStore, defaultExpectedSeconds: Int, interval: Duration, now: @escaping @Sendable () -> Date,
        logger: Logger, onPublished: @escaping @Sendable () -> Void
    ) {
        self.store = store
        self.defaultExpectedSeconds = defaultExpectedSeconds
        self.interval = interval
        self.now = now
        self.logger = logger
        self.onPublished = onPublished
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Re-evaluates soon (after an ingest).
    func poke() { wake.yield() }

    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { [wake, interval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    wake.yield()
                }
            }
            await cancelWhenGracefulShutdown {
                var iterator = self.wakes.makeAsyncIterator()
                while await iterator.next() != nil {
                    await self.evaluate()
                }
            }
            group.cancelAll()
        }
    }

    /// The status of a device at `nowMillis`.
    func status(of d: DeviceSummary, nowMillis: Int64) -> DeviceStatus {
        DeviceStatus.of(
            lastFixMillis: d.lastFix?.location.timestamp.millis, lastContactMillis: d.lastReceivedAt.millis,
            expectedSeconds: d.expectedIntervalSeconds ?? defaultExpectedSeconds, nowMillis: nowMillis)
    }

    func evaluate() async {
        guard let devices = try? await store.devices() else { return }
        let nowMillis = WireTimestamp(now()).millis
        var published = false
        for d in devices {
            let s = status(of: d, nowMillis: nowMillis)
            guard known.withLock({ $0[d.installId] }) != s else { continue }
            do {
                if try await store.publishDeviceStatus(
                    installId: d.installId, status: s.rawValue,
                    payload: Self.payload(d, s, self, nowMillis), atMillis: nowMillis)
                {
                    published = true
                }
                known.withLock { $0[d.installId] = s }
            } catch {
                logger.warning("device status not published", metadata: ["error": "\(error)"])
            }
        }
        if published { onPublished() }
    }

    /// The `device` event: `{"install_id","status","last_contact_at","last_fix_at","expected_interval_seconds"}`.
    static func payload(_ d: DeviceSummary, _ s: DeviceStatus, _ monitor: DeviceStatusMonitor, _ nowMillis: Int64) -> String {
        var w = WireJSONWriter(capacity: 200)
        w.raw("{\"install_id\":")
        w.string(d.installId.wireString)
        w.raw(",\"status\":")
        w.string(s.rawValue)
        w.raw(",\"last_contact_at\":")
        w.string(d.lastReceivedAt.description)
        if let fix = d.lastFix {
            w.raw(",\"last_fix_at\":")
            w.string(fix.location.timestamp.description)
        }
        w.raw(",\"expected_interval_seconds\":")
        w.number(Double(d.expectedIntervalSeconds ?? monitor.defaultExpectedSeconds))
        w.raw(",\"at\":")
        w.string(WireTimestamp(millis: nowMillis).description)
        w.raw("}")
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
