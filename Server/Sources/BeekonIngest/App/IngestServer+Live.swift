import Foundation
import Logging
import ServiceLifecycle

extension IngestServer {
    /// The live hub for a store: PostgreSQL adds LISTEN/NOTIFY as the cross-instance wake-up.
    /// `heartbeats`: ticks that replace the heartbeat's timer (tests).
    /// `circleStreamIsActive`: whether a circle's stream (its key starts with
    /// ``CircleService/streamPrefix``) still holds, re-checked like a share.
    static func makeHub(
        _ config: IngestConfiguration, store: any LocationStore, shares: ShareService, heartbeats: AsyncStream<Void>? = nil,
        logger: Logger, circleStreamIsActive: (@Sendable (String) async -> Bool)? = nil
    ) -> LiveHub {
        let poll = Duration.milliseconds(Int(config.livePollSeconds * 1000))
        let heartbeat = Duration.milliseconds(Int(config.liveHeartbeatSeconds * 1000))
        let active: @Sendable (String) async -> Bool = { id in
            if let circleStreamIsActive, id.hasPrefix(CircleService.streamPrefix) { return await circleStreamIsActive(id) }
            return await shares.isActive(id)
        }
        guard let postgres = store as? PostgresLocationStore else {
            return LiveHub(
                store: store, capacity: config.liveRingCapacity, pollInterval: poll, heartbeat: heartbeat, logger: logger,
                shareIsActive: active, heartbeats: heartbeats)
        }
        return LiveHub(
            store: store, capacity: config.liveRingCapacity, pollInterval: poll, heartbeat: heartbeat, logger: logger,
            shareIsActive: active, heartbeats: heartbeats
        ) { wake in
            await postgres.listenForEvents(wake)
        }
    }
}

/// Deletes events older than the retention every ten minutes, once the store is migrated.
struct EventRetention: Service {
    let store: any LocationStore
    let retentionSeconds: Int
    let now: @Sendable () -> Date
    let logger: Logger
    /// Opens once the store is migrated (nil: it is).
    var ready: StoreReadiness? = nil

    func run() async throws {
        await Periodic(interval: .seconds(600), ready: ready).run {
            let cutoff = now().addingTimeInterval(-Double(retentionSeconds))
            do {
                try await store.pruneEvents(receivedBefore: .init(cutoff))
            } catch {
                Periodic.logFailure("event retention", error, logger: logger)
            }
        }
    }
}
