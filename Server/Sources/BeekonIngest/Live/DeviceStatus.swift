import BeekonWire
import Foundation

/// A device's reporting state, computed from data rather than a constant (BY-8):
///
/// - `live`: its newest fix (by fix time) is at most `2 × expected` old.
/// - `delayed`: not live, but it made contact (any accepted upload) within `2 × expected`:
///   it is talking but its position is old — e.g. it is uploading a backlog, or has no fix.
/// - `silent`: no contact for more than `2 × expected`.
///
/// `expected` is the reporting interval the device declares in its envelope
/// (`device.sync_interval_seconds` / `device.check_in_interval_seconds`, the larger one),
/// or the server's `--expected-interval`. Arrival time never makes a position fresh: a
/// late backlog of old fixes leaves the device `delayed`, not `live`.
typealias DeviceStatus = WireDeviceStatus

extension WireDeviceStatus {
    /// The state at `nowMillis`.
    static func of(lastFixMillis: Int64?, lastContactMillis: Int64, expectedSeconds: Int, nowMillis: Int64) -> DeviceStatus {
        let window = Int64(max(expectedSeconds, 1)) * 2_000
        if let fix = lastFixMillis, nowMillis - fix <= window { return .live }
        if nowMillis - lastContactMillis <= window { return .delayed }
        return .silent
    }

    /// The time (Unix ms) at which the state judged at `nowMillis` next changes without a new
    /// upload: `live` ends `2 × expected` after the newest fix, `delayed` the same after the
    /// last contact; `silent` stays. Nil when nothing is due.
    static func nextChange(lastFixMillis: Int64?, lastContactMillis: Int64, expectedSeconds: Int, nowMillis: Int64) -> Int64? {
        let window = Int64(max(expectedSeconds, 1)) * 2_000
        switch of(
            lastFixMillis: lastFixMillis, lastContactMillis: lastContactMillis, expectedSeconds: expectedSeconds, nowMillis: nowMillis)
        {
        case .live: return lastFixMillis.map { $0 + window + 1 }
        case .delayed: return lastContactMillis + window + 1
        case .silent: return nil
        }
    }
}

extension DeviceTimes {
    /// "Paused since": a device that declared a reporting interval and is `silent`
    /// against it has stopped sharing — its app is no longer running — since its last contact
    /// (Unix ms). Nil for a device that is not silent, or that never declared an interval (the
    /// server's `--expected-interval` is a guess, not the device's promise). A viewer shows
    /// "paused since …" rather than a stale position; the device gets its nudge (`NudgePolicy`).
    func pausedSinceMillis(nowMillis: Int64) -> Int64? {
        guard let expected = expectedSeconds,
            DeviceStatus.of(
                lastFixMillis: lastFixMillis, lastContactMillis: lastContactMillis, expectedSeconds: expected, nowMillis: nowMillis)
                == .silent
        else { return nil }
        return lastContactMillis
    }
}

/// What the status of one device is judged from: its newest fix time, its last contact and
/// the interval it declared (the store's `deviceTimes`, or one accepted upload).
package struct DeviceTimes: Sendable, Equatable {
    /// The device.
    package var installId: UUID
    /// Newest fix by fix time (Unix ms), nil when no fix was stored.
    package var lastFixMillis: Int64?
    /// When the server last received a batch from it (Unix ms).
    package var lastContactMillis: Int64
    /// The reporting interval its newest batch declared, in seconds.
    package var expectedSeconds: Int?

    /// Creates the times of a device.
    package init(installId: UUID, lastFixMillis: Int64?, lastContactMillis: Int64, expectedSeconds: Int?) {
        self.installId = installId
        self.lastFixMillis = lastFixMillis
        self.lastContactMillis = lastContactMillis
        self.expectedSeconds = expectedSeconds
    }

    /// What one accepted upload says about its device.
    init(_ batch: IngestBatch) {
        self.init(
            installId: batch.envelope.device.installId, lastFixMillis: batch.envelope.locations.map(\.timestamp.millis).max(),
            lastContactMillis: batch.receivedAt.millis, expectedSeconds: batch.declaredInterval)
    }

    /// A device listing's times (the newest fix it lists, its last contact, its declared interval).
    init(_ d: DeviceSummary) {
        self.init(
            installId: d.installId, lastFixMillis: d.lastFix?.location.timestamp.millis, lastContactMillis: d.lastReceivedAt.millis,
            expectedSeconds: d.expectedIntervalSeconds)
    }

    /// Both pieces of knowledge together: the newer fix, the newer contact, and the interval
    /// declared with the newer contact.
    func merged(_ other: DeviceTimes) -> DeviceTimes {
        var out = self
        if let fix = other.lastFixMillis, fix > (out.lastFixMillis ?? .min) { out.lastFixMillis = fix }
        if other.lastContactMillis >= lastContactMillis {
            out.lastContactMillis = other.lastContactMillis
            out.expectedSeconds = other.expectedSeconds
        }
        return out
    }
}

/// The status rule for tests outside the module.
package enum DeviceStatusProbe {
    /// `DeviceStatus.of(…)` as its raw value.
    package static func of(fix: Int64?, contact: Int64, expected: Int, now: Int64) -> String {
        DeviceStatus.of(lastFixMillis: fix, lastContactMillis: contact, expectedSeconds: expected, nowMillis: now).rawValue
    }
}
