import BeekonWire
import Foundation
import GRDB

/// Key/value state that must survive process death: install id (SY-10),
/// tracking intent (LC-6), configuration (LC-8), counters (ST-3).
extension LocationStore {
    enum MetaKey {
        static let installID = "install_id"
        static let trackingIntent = "tracking_intent"
        static let config = "config"
    }

    static func meta(_ db: Database, _ key: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
    }

    static func setMeta(_ db: Database, _ key: String, _ value: String?) throws {
        if let value {
            try db.execute(
                sql: "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM meta WHERE key = ?", arguments: [key])
        }
    }

    static func addCounter(_ db: Database, _ key: String, _ n: Int) throws {
        guard n != 0 else { return }
        let old = try meta(db, key).flatMap { Int($0) } ?? 0
        try setMeta(db, key, String(old + n))
    }

    /// The install id, created once (UUIDv7 from `makeID`) and persisted.
    func installID(makeID: @Sendable @escaping () -> UUID) async throws(BeekonError) -> UUID {
        try await write("reading the install id") { db in
            if let s = try Self.meta(db, MetaKey.installID), let id = UUID(wire: s) { return id }
            let id = makeID()
            try Self.setMeta(db, MetaKey.installID, id.wireString)
            return id
        }
    }

    /// Replaces the install id with a new one (UUIDv7 from `makeID`), for an install that must
    /// enrol anew (a restored phone whose old id cannot be re-enrolled).
    func resetInstallID(makeID: @Sendable @escaping () -> UUID) async throws(BeekonError) -> UUID {
        try await write("resetting the install id") { db in
            let id = makeID()
            try Self.setMeta(db, MetaKey.installID, id.wireString)
            return id
        }
    }

    /// The persisted tracking intent: the session to resume, if any.
    func trackingIntent() async throws(BeekonError) -> UUID? {
        try await read("reading the tracking intent") { db in
            try Self.meta(db, MetaKey.trackingIntent).flatMap(UUID.init(wire:))
        }
    }

    /// The tracking intent read synchronously, for the host's launch call (it must retake
    /// CoreLocation sessions before `didFinishLaunching` returns): nil when there is no
    /// database yet, no intent, or the read fails (the asynchronous launch decision then
    /// reads it again and logs the failure).
    static func peekTrackingIntent(path: String) -> UUID? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        var configuration = Configuration()
        configuration.busyMode = .timeout(1)
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return nil }
        let value = try? queue.read { db -> String? in
            guard try db.tableExists("meta") else { return nil }
            return try meta(db, MetaKey.trackingIntent)
        }
        try? queue.close()
        return value.flatMap(UUID.init(wire:))
    }

    /// Persists the intent to track `session` and opens (or reopens) its session row, in one transaction.
    func beginSession(_ session: UUID, at now: Date) async throws(BeekonError) {
        try await write("persisting the tracking intent") { db in
            try Self.setMeta(db, MetaKey.trackingIntent, session.wireString)
            try db.execute(
                sql: """
                    INSERT INTO session(id, started_at) VALUES (?, ?)
                    ON CONFLICT(id) DO UPDATE SET stopped_at = NULL, stop_reason = NULL
                    """, arguments: [session.wireString, WireTimestamp(now).millis])
        }
    }

    /// Records the end of a session; clears the intent when `clearIntent` (a user stop).
    func endSession(_ session: UUID, reason: StopReason, at now: Date, clearIntent: Bool) async throws(BeekonError) {
        try await write("recording the end of the session") { db in
            try db.execute(
                sql: "UPDATE session SET stopped_at = ?, stop_reason = ? WHERE id = ?",
                arguments: [WireTimestamp(now).millis, reason.rawValue, session.wireString])
            if clearIntent { try Self.setMeta(db, MetaKey.trackingIntent, nil) }
        }
    }

    /// Forgets the tracking intent.
    func clearIntent() async throws(BeekonError) {
        try await write("clearing the tracking intent") { db in try Self.setMeta(db, MetaKey.trackingIntent, nil) }
    }

    /// The last configuration passed to `configure`, if any.
    func savedConfig() async throws(BeekonError) -> BeekonConfig? {
        let json = try await read("reading the configuration") { db in try Self.meta(db, MetaKey.config) }
        guard let json, let data = json.data(using: .utf8) else { return nil }
        return try? JSONDecoder().decode(BeekonConfig.self, from: data)
    }

    /// Persists the configuration.
    func saveConfig(_ config: BeekonConfig) async throws(BeekonError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: (try? encoder.encode(config)) ?? Data("{}".utf8), as: UTF8.self)
        try await write("saving the configuration") { db in try Self.setMeta(db, MetaKey.config, json) }
    }

    /// A snapshot for `beekon status`.
    func report() async throws(BeekonError) -> StoreReport {
        try await read("reading status") { db in
            let intent = try Self.meta(db, MetaKey.trackingIntent)
            let lastSession = try Row.fetchOne(db, sql: "SELECT * FROM session ORDER BY started_at DESC, id DESC LIMIT 1")
            let counts = try Row.fetchOne(db, sql: "SELECT COUNT(*) AS n, MIN(ts) AS lo, MAX(ts) AS hi FROM location")!
            return StoreReport(
                installID: try Self.meta(db, MetaKey.installID).flatMap(UUID.init(wire:)),
                trackingIntent: intent.flatMap(UUID.init(wire:)),
                lastSessionID: (lastSession?["id"] as String?).flatMap(UUID.init(wire:)),
                lastSessionStopReason: (lastSession?["stop_reason"] as String?).flatMap(StopReason.init(rawValue:)),
                sessionCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session") ?? 0,
                locationCount: counts["n"],
                geofenceEventCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM geofence_event") ?? 0,
                oldestFix: (counts["lo"] as Int64?).map { WireTimestamp(millis: $0).date },
                newestFix: (counts["hi"] as Int64?).map { WireTimestamp(millis: $0).date },
                trimmedRowsTotal: try Self.meta(db, "trimmed_rows_total").flatMap { Int($0) } ?? 0,
                agedRowsTotal: try Self.meta(db, "aged_rows_total").flatMap { Int($0) } ?? 0,
                trimmedUnsentTotal: try Self.meta(db, "trimmed_unsent_total").flatMap { Int($0) } ?? 0,
                pendingUploads: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location WHERE upload_state = 0") ?? 0,
                openBatches: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM upload_batch") ?? 0,
                rejectedLocations: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM location WHERE upload_state = 2") ?? 0,
                motion: try Self.meta(db, "motion").flatMap(Motion.init(rawValue:)) ?? .unknown,
                geofenceCount: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM geofence") ?? 0,
                lastSyncOutcome: try Self.meta(db, "last_sync_outcome"),
                lastUploadError: try String.fetchOne(
                    db,
                    sql:
                        "SELECT COALESCE(last_error, 'HTTP ' || last_status) FROM upload_batch WHERE attempts > 0 ORDER BY created_at LIMIT 1"
                ))
        }
    }
}

/// What the database says about the SDK's state: for `beekon status` and diagnostics.
public struct StoreReport: Sendable, Hashable {
    /// The install id, once created.
    public var installID: UUID?
    /// The session the SDK will resume on the next launch, if any.
    public var trackingIntent: UUID?
    /// The most recently started session.
    public var lastSessionID: UUID?
    /// Why the most recent session ended; nil while it runs (or after a crash).
    public var lastSessionStopReason: StopReason?
    /// Number of sessions ever recorded.
    public var sessionCount: Int
    /// Stored fixes.
    public var locationCount: Int
    /// Stored geofence events.
    public var geofenceEventCount: Int
    /// Timestamp of the oldest stored fix.
    public var oldestFix: Date?
    /// Timestamp of the newest stored fix.
    public var newestFix: Date?
    /// Fixes removed by the row cap since the database was created.
    public var trimmedRowsTotal: Int
    /// Fixes removed by the local-only age prune since the database was created.
    public var agedRowsTotal: Int
    /// Fixes removed by the row cap before they were uploaded (sync on), ever.
    public var trimmedUnsentTotal: Int
    /// Fixes waiting for upload.
    public var pendingUploads: Int
    /// Batches assembled and not yet acknowledged (re-sent with the same id).
    public var openBatches: Int
    /// Fixes the server rejected (400/422), kept aside.
    public var rejectedLocations: Int
    /// The motion state last reported by the stationary detector.
    public var motion: Motion
    /// Registered geofences.
    public var geofenceCount: Int
    /// The last sync outcome (e.g. `succeeded at …`, `failed: rejected (HTTP 400)`).
    public var lastSyncOutcome: String?
    /// The last failure of the oldest open batch, if it failed.
    public var lastUploadError: String?
}
