import BeekonGzip
import BeekonWire
@testable import Beekon
import BeekonTesting
import Foundation

extension Harness {
    func beekon(transport: any HTTPTransport, ids: SequentialIDs? = nil, rowCap: Int = 100_000) -> Beekon {
        var makeID: (@Sendable () -> UUID)?
        if let ids { makeID = { ids.next() } }
        return Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, makeID: makeID,
                rowCap: rowCap, transport: transport, randomUnit: { 0 }))
    }
}

let loopbackURL = URL(string: "http://127.0.0.1:9/ingest")!

func syncConfig(_ sync: SyncConfig = SyncConfig(url: loopbackURL)) -> BeekonConfig {
    BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0, sync: sync)
}

extension HTTPRequest {
    /// The gunzipped JSON body.
    var json: String { String(decoding: (try? Gzip.decompress(body)) ?? Data(), as: UTF8.self) }

    /// The decoded envelope (schema v1).
    var envelope: WireEnvelope { try! WireEnvelope.decode(Gzip.decompress(body)) }
}

/// Waits for the next status matching `predicate` on a fresh subscription.
func waitForStatus(_ beekon: Beekon, _ predicate: @Sendable (SyncStatus) -> Bool) async -> SyncStatus? {
    for await s in beekon.syncStatus where predicate(s) { return s }
    return nil
}

/// Configures sync and waits for the drain that `configure` triggers, so the test's
/// later requests and counts are deterministic.
func configureSync(_ beekon: Beekon, _ config: BeekonConfig) async throws {
    try await beekon.configure(config)
    try await beekon.sync()
}
