import Foundation

/// The ingest endpoint's 2xx answer to an upload: what was stored, and — a must-ignore
/// addition — the device's open locate requests, now delivered (SPEC BY-2).
///
/// Written `{"duplicate_batch","locations_stored","locations_duplicate","events_stored",
/// "events_duplicate","locate_requests"?}` in that order; `locate_requests` is omitted when the
/// server has no locate channel (nil), and written (possibly empty) otherwise.
public struct WireIngestAnswer: Hashable, Sendable {
    /// The batch id had been stored before: nothing was written.
    public var duplicateBatch: Bool
    /// Locations newly stored.
    public var locationsStored: Int
    /// Locations skipped because their id was already stored.
    public var locationsDuplicate: Int
    /// Geofence events newly stored.
    public var eventsStored: Int
    /// Geofence events skipped because their id was already stored.
    public var eventsDuplicate: Int
    /// The device's open locate requests; nil when the server does not deliver them.
    public var locateRequests: [WireLocateNotice]?

    /// Creates an answer.
    public init(
        duplicateBatch: Bool, locationsStored: Int, locationsDuplicate: Int, eventsStored: Int, eventsDuplicate: Int,
        locateRequests: [WireLocateNotice]? = nil
    ) {
        self.duplicateBatch = duplicateBatch
        self.locationsStored = locationsStored
        self.locationsDuplicate = locationsDuplicate
        self.eventsStored = eventsStored
        self.eventsDuplicate = eventsDuplicate
        self.locateRequests = locateRequests
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 160 + (locateRequests?.count ?? 0) * 130)
        w.raw("{\"duplicate_batch\":")
        w.raw(duplicateBatch ? "true" : "false")
        w.raw(",\"locations_stored\":")
        w.raw(String(locationsStored))
        w.raw(",\"locations_duplicate\":")
        w.raw(String(locationsDuplicate))
        w.raw(",\"events_stored\":")
        w.raw(String(eventsStored))
        w.raw(",\"events_duplicate\":")
        w.raw(String(eventsDuplicate))
        if let locateRequests {
            w.raw(",\"locate_requests\":")
            w.write(locateRequests)
        }
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads an answer; unknown members are ignored (must-ignore).
    /// - Throws: `WireDecodingError` when the body is not JSON of this shape or a field breaks it
    ///   (a negative count, a notice without a valid id or time).
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireIngestAnswer {
        struct Raw: Decodable {
            var duplicate_batch: Bool
            var locations_stored: Int
            var locations_duplicate: Int
            var events_stored: Int
            var events_duplicate: Int
            var locate_requests: [RawLocateNotice]?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        let counts = [
            ("locations_stored", raw.locations_stored), ("locations_duplicate", raw.locations_duplicate),
            ("events_stored", raw.events_stored), ("events_duplicate", raw.events_duplicate),
        ]
        for (name, value) in counts where value < 0 { throw .invalid(path: name, reason: "must not be negative") }
        return WireIngestAnswer(
            duplicateBatch: raw.duplicate_batch, locationsStored: raw.locations_stored, locationsDuplicate: raw.locations_duplicate,
            eventsStored: raw.events_stored, eventsDuplicate: raw.events_duplicate,
            locateRequests: try raw.locate_requests.map { (n) throws(WireDecodingError) in
                try WireLocateNotice.validated(n, path: "locate_requests")
            })
    }
}
