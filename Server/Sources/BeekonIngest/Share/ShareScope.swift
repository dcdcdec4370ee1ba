import BeekonWire
import Foundation

/// What a share lets its viewers see, declared in one place (issue 31): its keys (the same in the
/// `POST /v1/shares` body, the share's JSON, the stored `scope` column and `beekon-ingest share
/// create --set KEY=VALUE`), their validation, and the time filter every read and the live stream
/// apply. Adding a key means editing this file, `openapi.json` (a test compares the two), the
/// dashboard's share form if it offers the key, and a test; neither store changes.
package struct ShareScope: Sendable, Equatable, Codable {
    /// How far back fixes may go, in seconds; nil for no limit.
    package var historySeconds: Int?
    /// Whether it may open `GET /v1/live`.
    package var live = false
    /// Positions are coarsened to this many metres; nil for full precision.
    package var precisionMeters: Double?
    /// Whether its viewers may ask its devices for a fresh fix (`POST /v1/devices/{id}/locate`).
    package var locate = false
    /// The hours of the day it sees, `HH:MM-HH:MM` in `timeZone` (end exclusive; `22:00-06:00`
    /// crosses midnight); nil for all day.
    package var hours: String? { didSet { daily = DailyHours(hours, timeZone) } }
    /// The IANA time zone of `hours` (e.g. `Europe/Berlin`; daylight saving time is the zone's).
    package var timeZone: String? { didSet { daily = DailyHours(hours, timeZone) } }

    /// `hours` in `timeZone`, parsed once (nil without hours, or when they do not parse: then
    /// nothing is admitted); kept in step with both by their `didSet`.
    private var daily: DailyHours?

    /// The keys, as they appear in every form (request, answer, stored JSON, `--set`).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case live, locate, hours
        case historySeconds = "history_seconds"
        case precisionMeters = "precision_m"
        case timeZone = "time_zone"
    }

    /// Every key this scope reads and writes (compared with the OpenAPI contract by a test).
    package static var keys: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// Everything: admin keys and auth off.
    static let everything = ShareScope(live: true, locate: true)

    /// Creates a scope; `validate()` checks it.
    package init(
        historySeconds: Int? = nil, live: Bool = false, precisionMeters: Double? = nil, locate: Bool = false,
        hours: String? = nil, timeZone: String? = nil
    ) {
        self.historySeconds = historySeconds
        self.live = live
        self.precisionMeters = precisionMeters
        self.locate = locate
        self.hours = hours
        self.timeZone = timeZone
        daily = DailyHours(hours, timeZone)
    }

    /// Decodes the keys it knows (absent or null: the default); other keys are left to the caller.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            historySeconds: try c.decodeIfPresent(Int.self, forKey: .historySeconds),
            live: try c.decodeIfPresent(Bool.self, forKey: .live) ?? false,
            precisionMeters: try c.decodeIfPresent(Double.self, forKey: .precisionMeters),
            locate: try c.decodeIfPresent(Bool.self, forKey: .locate) ?? false,
            hours: try c.decodeIfPresent(String.self, forKey: .hours),
            timeZone: try c.decodeIfPresent(String.self, forKey: .timeZone))
    }

    /// Every key, absent optionals as `null`.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(historySeconds, forKey: .historySeconds)
        try c.encode(live, forKey: .live)
        try c.encode(precisionMeters, forKey: .precisionMeters)
        try c.encode(locate, forKey: .locate)
        try c.encode(hours, forKey: .hours)
        try c.encode(timeZone, forKey: .timeZone)
    }

    /// Checks every key; the message names the key and what it must be.
    package func validate() throws(ShareSpec.Invalid) {
        // Bounded like the CLI's durations (Int32 seconds, ~68 years): the server adds them to
        // millisecond times, which must not overflow (found by schemathesis).
        if let h = historySeconds, !(1...Int(Int32.max)).contains(h) {
            throw ShareSpec.Invalid(description: "history_seconds: the history window must be 1…2147483647 seconds")
        }
        if let p = precisionMeters, !(p >= 1 && p <= 100_000) {
            throw ShareSpec.Invalid(description: "precision_m: the precision must be 1…100000 metres")
        }
        switch (hours, timeZone) {
        case (nil, nil): break
        case (_?, nil):
            throw ShareSpec.Invalid(description: "time_zone: hours need a time zone, an IANA name such as Europe/Berlin")
        case (nil, _?): throw ShareSpec.Invalid(description: "hours: a time zone needs hours, e.g. \"07:00-19:00\"")
        case (let h?, let z?):
            guard DailyHours.minutes(h) != nil else {
                throw ShareSpec.Invalid(
                    description: "hours: '\(WireLimits.prefix(h, bytes: 40))' is not a range HH:MM-HH:MM of two different times "
                        + "(00:00…24:00; e.g. 07:00-19:00, or 22:00-06:00 across midnight)")
            }
            guard DailyHours.zone(z) != nil else {
                throw ShareSpec.Invalid(
                    description: "time_zone: '\(WireLimits.prefix(z, bytes: 40))' is not an IANA time zone name (e.g. Europe/Berlin)")
            }
        }
    }

    /// The earliest fix time (Unix ms) visible at `nowMillis`; nil for no limit.
    func windowStart(nowMillis: Int64) -> Int64? {
        historySeconds.map { nowMillis - Int64($0) * 1000 }
    }

    /// Whether a fix or event taken at `millis` is visible at `nowMillis`: inside the history
    /// window and inside the hours of the day.
    func admits(millis: Int64, nowMillis: Int64) -> Bool {
        if let start = windowStart(nowMillis: nowMillis), millis < start { return false }
        if hours != nil { return daily?.contains(millis) ?? false }
        return true
    }

    /// Whether it filters fixes one by one beyond a time window (hours of the day): then
    /// aggregates over all fixes (counts, the overview tiers) are not shown.
    var filtersEachFix: Bool { hours != nil }

    /// Whether it hides figures over all time (a device's fix count).
    var limitsTime: Bool { historySeconds != nil || filtersEachFix }

    /// The coarsening its precision asks for (nil: full precision).
    var coarsening: Coarsening? { precisionMeters.map(Coarsening.init(meters:)) }
}

/// Hours of the day in a time zone: `[start, end)` in minutes after local midnight, across
/// midnight when `end < start`.
struct DailyHours: Sendable, Equatable {
    let start: Int, end: Int
    let zone: TimeZone

    /// Parses `hours` and `timeZone`; nil when either is absent or invalid.
    init?(_ hours: String?, _ timeZone: String?) {
        guard let hours, let timeZone, let range = Self.minutes(hours), let z = Self.zone(timeZone) else { return nil }
        start = range.0
        end = range.1
        zone = z
    }

    /// `HH:MM-HH:MM` (00:00…24:00) as minutes; nil when malformed or empty (start == end).
    static func minutes(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let s = clock(parts[0]), let e = clock(parts[1]), s != e, s < 1440 else { return nil }
        return (s, e)
    }

    private static func clock(_ text: Substring) -> Int? {
        let hm = text.split(separator: ":", omittingEmptySubsequences: false)
        guard hm.count == 2, hm[0].count == 2, hm[1].count == 2, hm.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let h = Int(hm[0]), let m = Int(hm[1]), (0...59).contains(m), (0...24).contains(h), h < 24 || m == 0
        else { return nil }
        return h * 60 + m
    }

    /// An IANA zone by name (`Europe/Berlin`, `UTC`); nil for abbreviations and offsets Foundation also accepts.
    static func zone(_ name: String) -> TimeZone? {
        guard name.utf8.count <= 64, TimeZone.knownTimeZoneIdentifiers.contains(name) || name == "UTC" else { return nil }
        return TimeZone(identifier: name)
    }

    /// Whether the instant `millis` (Unix ms) falls inside the hours, in the zone's local time then.
    func contains(_ millis: Int64) -> Bool {
        let seconds = millis.dividedRoundingDown(by: 1000)
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(seconds)))
        let local = seconds + Int64(offset)
        let minute = Int(((local % 86_400) + 86_400) % 86_400 / 60)
        return start < end ? (start..<end).contains(minute) : (minute >= start || minute < end)
    }
}

extension Int64 {
    /// Division rounding towards minus infinity (times before 1970 stay on their day).
    fileprivate func dividedRoundingDown(by d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}

// MARK: - What a share's viewers read, narrowed here and nowhere else (issue 31)

extension ShareScope {
    /// Rows of `LocationStore.activity` one answer reads at most (XR-3: about 140 days of a
    /// device fixing every minute); past it the answer covers the newest activity and says
    /// `truncated`.
    static let activityLimit = 200_000

    /// Whether its viewers see when a device was last in contact and its status (`/devices`'
    /// `last_received_at`, `last_contact_at`, `status`, and the live `device` events). Contact
    /// happens at any hour and is no fix, so a share limited in time (history window or hours)
    /// does not see it at all: a field shown or left out depending on the contact's time would
    /// itself tell when the device was in contact. Its viewers judge freshness by `last_fix_at`.
    var showsContact: Bool { !limitsTime }

    /// Whether every fix or event summed in `minute` is visible at `nowMillis` (a minute lies
    /// wholly inside or outside the hours; both ends are checked, so a sub-minute zone offset
    /// of old times fails closed).
    func admits(_ minute: ActivityMinute, nowMillis: Int64) -> Bool {
        admits(millis: minute.firstMillis, nowMillis: nowMillis) && admits(millis: minute.lastMillis, nowMillis: nowMillis)
    }

    /// A device's sessions as its viewers may see them, newest first: each summarised only from
    /// the fixes and geofence events it admits (counts, first and last fix time); a session with
    /// none is left out.
    func sessions(from minutes: [ActivityMinute], installId: UUID, nowMillis: Int64) -> [SessionSummary] {
        var byId: [UUID: SessionSummary] = [:]
        for m in minutes where admits(m, nowMillis: nowMillis) {
            var s = byId[m.sessionId] ?? SessionSummary(sessionId: m.sessionId, installId: installId, fixCount: 0, eventCount: 0)
            if m.isEvent {
                s.eventCount += m.count
            } else {
                s.fixCount += m.count
                s.firstFixAt = WireTimestamp(millis: min(s.firstFixAt?.millis ?? .max, m.firstMillis))
                s.lastFixAt = WireTimestamp(millis: max(s.lastFixAt?.millis ?? .min, m.lastMillis))
            }
            byId[m.sessionId] = s
        }
        return Array(byId.values).sortedNewestFirst()
    }

    /// The time of the newest fix its viewers may see that may be a device's last fix (see
    /// ``FixClock``); nil when there is none.
    func newestFixMillis(in minutes: [ActivityMinute], nowMillis: Int64) -> Int64? {
        minutes.lazy.filter { !$0.isEvent && self.admits($0, nowMillis: nowMillis) }.compactMap(\.newestSaneMillis).max()
    }
}
