import BeekonWire
import Foundation
import ServiceLifecycle

/// Durable storage for uploads, with dedupe, plus the reads the API serves.
///
/// Contract for `ingest`: the whole envelope is written in one transaction;
/// the batch id and every location / geofence-event id are unique keys and
/// rows that already exist are skipped (`INSERT … ON CONFLICT DO NOTHING`),
/// so any replay — whole, overlapping, concurrent, on another server
/// instance — stores nothing twice. The call returns only after the commit.
package protocol LocationStore: Sendable {
    /// Long-running parts (e.g. a connection pool) to run in the app's ServiceGroup.
    var services: [any Service] { get }
    /// Creates or upgrades the schema; safe to run concurrently from several instances.
    func migrate() async throws(StoreError)
    /// Stores one envelope durably; see the protocol's contract.
    func ingest(_ batch: IngestBatch) async throws(StoreError) -> IngestResult
    /// Checks that the database answers.
    func ping() async throws(StoreError)
    /// Prometheus text about the store's ingest writer, for `/metrics` (empty when it has none to tell).
    var writerMetricsText: String { get }
    /// Whether every fix and geofence event of `envelope` is stored for its install: a replay
    /// of a stored batch, as opposed to a batch id reused with other content (issue 28).
    func holdsEverything(of envelope: WireEnvelope) async throws(StoreError) -> Bool
    /// Every device, with its newest fix by fix time.
    func devices() async throws(StoreError) -> [DeviceSummary]
    /// What device status is judged from, for one device (`installId`) or every device (nil);
    /// a few indexed reads per device, nothing that grows with its history.
    func deviceTimes(installId: UUID?) async throws(StoreError) -> [DeviceTimes]
    /// The sessions of one device, newest first; with `sinceMillis`, only what lies in that
    /// window (times, counts; sessions with nothing in it are left out), for a share's window;
    /// at most `limit` (issue 28: the read is bounded in the database, not cut after it).
    func sessions(installId: UUID, sinceMillis: Int64?, limit: Int?) async throws(StoreError) -> [SessionSummary]
    /// A device's fixes and geofence events at or after `sinceMillis`, summed per session and
    /// UTC minute, newest minute first, at most `limit` rows: what a share that filters fix by fix
    /// (hours of the day) is summarised from by `ShareScope` (issue 31), so that the rule lives
    /// there and not in SQL. A minute lies wholly inside or outside any hours of the day, as every
    /// zone's offset and transition falls on a whole minute.
    func activity(installId: UUID, sinceMillis: Int64?, limit: Int) async throws(StoreError) -> [ActivityMinute]
    /// One page of a session's fixes in (timestamp, id) order, at most `query.limit` (issue 28:
    /// a track is paged, never read whole, however long the session).
    func track(_ query: TrackQuery) async throws(StoreError) -> FixPage
    /// One page of a device's fixes in a time range, in (timestamp, id) order.
    func fixes(_ query: FixQuery) async throws(StoreError) -> FixPage
    /// A device's beacon proximity events in a time range, in (timestamp, id) order (BY-5).
    func proximityEvents(_ query: ProximityQuery) async throws(StoreError) -> [StoredProximityEvent]
    /// Token bookkeeping for the token endpoint.
    var tokens: any TokenStore { get }
    /// Viewer shares and their access records.
    var shares: any ShareStore { get }
    /// People and circles (issue 52).
    var circles: any CircleStore { get }
    /// Locate requests.
    var locates: any LocateStore { get }
    /// Devices' push tokens (XR-6).
    var pushTokens: any PushTokenStore { get }
    /// The once-a-day nudge bookkeeping (docs/nudges.md).
    var nudges: any NudgeStore { get }
    /// Lean position reads for the dashboard's map.
    var history: any HistoryStore { get }
    /// Up to `limit` events with `seq > after`, in sequence order. Never skips one that
    /// becomes visible later (see `LiveEvent`).
    func events(after: Int64, limit: Int) async throws(StoreError) -> [LiveEvent]
    /// The newest sequence and the retention mark.
    func eventMarks() async throws(StoreError) -> EventLogMarks
    /// Deletes events received before `cutoff` (retention); viewers behind it get `reset`.
    func pruneEvents(receivedBefore cutoff: WireTimestamp) async throws(StoreError)
    /// Publishes a device's status: when it differs from the last one stored, stores it and
    /// appends a `device` event (in commit order, like ingest); returns whether it changed.
    func publishDeviceStatus(installId: UUID, status: String, payload: String, atMillis: Int64) async throws(StoreError) -> Bool
}

/// An envelope with what the server knows about its arrival.
package struct IngestBatch: Sendable {
    /// The validated envelope.
    package var envelope: WireEnvelope
    /// When the server received it.
    package var receivedAt: WireTimestamp
    /// Who sent it (token subject or `api-key`), nil with auth off.
    package var principal: String?

    /// Creates a batch.
    package init(envelope: WireEnvelope, receivedAt: WireTimestamp, principal: String? = nil) {
        self.envelope = envelope
        self.receivedAt = receivedAt
        self.principal = principal
    }

    /// The reporting interval the device declared: the larger of its sync and check-in intervals.
    var declaredInterval: Int? {
        let d = envelope.device
        return [d.syncIntervalSeconds, d.checkInIntervalSeconds].compactMap { $0 }.max()
    }
}

/// What one `ingest` call stored.
package struct IngestResult: Sendable, Equatable, Codable {
    /// The batch id had been seen before: nothing was written.
    package var duplicateBatch: Bool
    /// Locations newly stored.
    package var locationsStored: Int
    /// Locations skipped because their id was already stored.
    package var locationsDuplicate: Int
    /// Geofence events newly stored.
    package var eventsStored: Int
    /// Geofence events skipped because their id was already stored.
    package var eventsDuplicate: Int
    /// Whether something new was stored (and so the event log grew).
    package var storedAnything: Bool { locationsStored + eventsStored > 0 }

    /// Creates a result.
    package init(duplicateBatch: Bool, locationsStored: Int, locationsDuplicate: Int, eventsStored: Int, eventsDuplicate: Int) {
        self.duplicateBatch = duplicateBatch
        self.locationsStored = locationsStored
        self.locationsDuplicate = locationsDuplicate
        self.eventsStored = eventsStored
        self.eventsDuplicate = eventsDuplicate
    }

    enum CodingKeys: String, CodingKey {
        case duplicateBatch = "duplicate_batch"
        case locationsStored = "locations_stored"
        case locationsDuplicate = "locations_duplicate"
        case eventsStored = "events_stored"
        case eventsDuplicate = "events_duplicate"
    }
}

extension LocationStore {
    /// Every session of one device, newest first.
    package func sessions(installId: UUID) async throws(StoreError) -> [SessionSummary] {
        try await sessions(installId: installId, sinceMillis: nil, limit: nil)
    }
}

/// Time sanity (issue 28): a fix stamped more than ``futureToleranceMillis`` after the
/// server received it comes from a wrong clock. It is stored (history keeps what the
/// device sent) but never becomes a device's `last_fix`, so it cannot pin the device's
/// position or keep its status `live`.
package enum FixClock {
    /// Ten minutes: far beyond NTP-synchronised skew, well within the live window's scale.
    package static let futureToleranceMillis: Int64 = 10 * 60 * 1000
}

/// A device and its newest fix (by fix time, never arrival time; never a fix stamped more
/// than ``FixClock/futureToleranceMillis`` after its arrival).
package struct DeviceSummary: Sendable, Equatable {
    /// The device's install id.
    package var installId: UUID
    /// Platform, SDK version and model from its newest batch.
    package var platform: String, sdkVersion: String, model: String?
    /// Newest fix by fix timestamp, if any fix was stored.
    package var lastFix: StoredFix?
    /// When the server last received a batch from it.
    package var lastReceivedAt: WireTimestamp
    /// Number of fixes stored for it.
    package var fixCount: Int
    /// The reporting interval its newest batch declared, in seconds.
    package var expectedIntervalSeconds: Int? = nil
}

/// One tracking run of a device.
package struct SessionSummary: Sendable, Equatable {
    /// The session id.
    package var sessionId: UUID
    /// The device.
    package var installId: UUID
    /// Oldest and newest fix time (nil for a session with only geofence events).
    package var firstFixAt: WireTimestamp?, lastFixAt: WireTimestamp?
    /// Fixes stored.
    package var fixCount: Int
    /// Geofence events stored.
    package var eventCount: Int
}

/// One session's fixes (or geofence events) within one UTC minute (`LocationStore.activity`).
package struct ActivityMinute: Sendable, Equatable {
    /// The session.
    package var sessionId: UUID
    /// Whether these are geofence events (else fixes).
    package var isEvent: Bool
    /// How many.
    package var count: Int
    /// The oldest and newest time among them (Unix ms).
    package var firstMillis: Int64, lastMillis: Int64
    /// Fixes only: the newest fix time that may be a device's last fix (not stamped past
    /// ``FixClock/futureToleranceMillis`` after its arrival); nil for events or when none may.
    package var newestSaneMillis: Int64?
}

/// A stored fix with its context: the viewer fix object of the wire (one type, written and read
/// by BeekonWire on both sides, issue 31).
package typealias StoredFix = WireViewerFix

/// A paged query of fixes: `from` inclusive, `to` exclusive, keyset-paged by (timestamp, id).
package struct FixQuery: Sendable, Equatable {
    /// The device.
    package var installId: UUID
    /// Time range.
    package var from: WireTimestamp?, to: WireTimestamp?
    /// Page size.
    package var limit: Int
    /// Continue after this (timestamp, id), from the previous page's cursor.
    package var after: FixCursor?

    /// Creates a query.
    package init(installId: UUID, from: WireTimestamp? = nil, to: WireTimestamp? = nil, limit: Int = 500, after: FixCursor? = nil) {
        self.installId = installId
        self.from = from
        self.to = to
        self.limit = limit
        self.after = after
    }
}

/// A paged query of one session's fixes, keyset-paged by (timestamp, id).
package struct TrackQuery: Sendable, Equatable {
    /// The session.
    package var sessionId: UUID
    /// Only fixes at or after this time (a share's history window); nil for all.
    package var sinceMillis: Int64?
    /// Page size.
    package var limit: Int
    /// Continue after this (timestamp, id), from the previous page's cursor.
    package var after: FixCursor?

    /// Creates a query.
    package init(sessionId: UUID, sinceMillis: Int64? = nil, limit: Int, after: FixCursor? = nil) {
        self.sessionId = sessionId
        self.sinceMillis = sinceMillis
        self.limit = limit
        self.after = after
    }
}

extension LocationStore {
    /// Every fix of a session in time order, page by page (for tools and tests; the API pages).
    package func track(sessionId: UUID) async throws(StoreError) -> [StoredFix] {
        var all: [StoredFix] = []
        var query = TrackQuery(sessionId: sessionId, limit: 5_000)
        while true {
            let page = try await track(query)
            all += page.fixes
            guard let next = page.next else { return all }
            query.after = next
        }
    }
}

/// A page of fixes and the cursor for the next one (nil on the last page).
package struct FixPage: Sendable, Equatable {
    /// The fixes, in (timestamp, id) order.
    package var fixes: [StoredFix]
    /// Pass as `after` to get the next page.
    package var next: FixCursor?
}

/// A position in (timestamp, id) order.
package struct FixCursor: Sendable, Equatable {
    /// Fix time in Unix ms.
    package var millis: Int64
    /// Fix id.
    package var id: UUID

    /// Creates a cursor.
    package init(millis: Int64, id: UUID) {
        self.millis = millis
        self.id = id
    }

    /// The opaque text form used in the API (`<ms>_<uuid>`).
    package var token: String { "\(millis)_\(id.wireString)" }

    /// Parses the text form.
    package init?(token: String) {
        let parts = token.split(separator: "_", maxSplits: 1)
        guard parts.count == 2, let ms = Int64(parts[0]), let id = UUID(uuidString: String(parts[1])) else { return nil }
        self.init(millis: ms, id: id)
    }
}
