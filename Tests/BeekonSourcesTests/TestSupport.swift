import BeekonPrimitives
import Foundation
import Testing
import Beekon
@testable import BeekonSources

/// The real recordings kept in the repository: …/Tests/BeekonSourcesTests/TestSupport.swift → ../Data (see its NOTICE.md).
enum SharedData {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../Data")
        .standardizedFileURL

    static func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    static func data(_ relative: String) throws -> Data { try Data(contentsOf: url(relative)) }

    static let gpxFiles = [
        "gpx/togeojson_apple_watch_walk_1hz.gpx",
        "gpx/movingpandas_304_to_UL_bus_1hz.gpx",
        "gpx/gpxgo_visnjan_4s.gpx",
    ]

    static let nmeaFiles = [
        "nmea/gpsd_bundg_zeus_9_boat.log",
        "nmea/gpsd_haicom-305N_walk.log",
        "nmea/gpsd_humminbird-M37_powerboat.log",
        "nmea/derived_304_to_UL_bus.nmea",
        "nmea/derived_apple_watch_walk.nmea",
    ]
}

/// A hand-driven real clock: `now` moves only with `advance(by:)`, and sleepers
/// wake when it passes their deadline (cancellation-safe).
final class ManualRealClock: BeekonClock, Sendable {
    private struct Sleeper {
        var deadline: TimeInterval
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var current: TimeInterval
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelledEarly: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state: Locked<State>

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Locked(State(current: start.timeIntervalSince1970))
    }

    func now() -> Date { state.withLock { Date(timeIntervalSince1970: $0.current) } }

    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    func advance(by seconds: TimeInterval) {
        let due = state.withLock { s -> [CheckedContinuation<Void, any Error>] in
            s.current += seconds
            let now = s.current
            let ready = s.sleepers.filter { $0.value.deadline <= now }
            for id in ready.keys { s.sleepers[id] = nil }
            return ready.map(\.value.continuation)
        }
        for c in due { c.resume() }
    }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let c = duration.components
        let seconds = Double(c.seconds) + Double(c.attoseconds) * 1e-18
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (cont: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { s -> Int in
                    if s.cancelledEarly.remove(id) != nil { return 1 }
                    if seconds <= 0 { return 2 }
                    s.sleepers[id] = Sleeper(deadline: s.current + seconds, continuation: cont)
                    return 0
                }
                if outcome == 1 { cont.resume(throwing: CancellationError()) }
                if outcome == 2 { cont.resume() }
            }
        } onCancel: {
            let cont = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                if let sleeper = s.sleepers.removeValue(forKey: id) { return sleeper.continuation }
                s.cancelledEarly.insert(id)
                return nil
            }
            cont?.resume(throwing: CancellationError())
        }
    }
}

/// Yields until `condition` holds (no sleeping); records an issue after many rounds.
func eventually(
    _ what: String, rounds: Int = 200_000, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async -> Bool
) async {
    for _ in 0..<rounds {
        if await condition() { return }
        await Task.yield()
    }
    Issue.record("condition never became true: \(what)", sourceLocation: sourceLocation)
}

/// Yields a number of times, to give other tasks a chance to (wrongly) make progress.
func settle(_ rounds: Int = 2_000) async {
    for _ in 0..<rounds { await Task.yield() }
}

/// A fix at `seconds` after a fixed epoch, on a diagonal line.
func diagonalFix(_ seconds: TimeInterval, _ i: Int = 0) -> RawFix {
    RawFix(
        timestamp: Date(timeIntervalSince1970: 1_600_000_000 + seconds),
        latitude: 50 + Double(i) * 0.001, longitude: 8 + Double(i) * 0.001
    )
}

/// The fixes a track read gives, or an issue.
func read(_ relative: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> TrackReadResult {
    try TrackFile.read(contentsOf: SharedData.url(relative))
}

/// Every fix has a finite in-range position and finite optional values.
func allSane(_ fixes: [RawFix]) -> Bool {
    fixes.allSatisfy { f in
        (-90...90).contains(f.latitude) && (-180...180).contains(f.longitude)
            && f.timestamp.timeIntervalSince1970.isFinite
            && [f.accuracy, f.speed, f.bearing, f.altitude].allSatisfy { $0?.isFinite ?? true }
    }
}
