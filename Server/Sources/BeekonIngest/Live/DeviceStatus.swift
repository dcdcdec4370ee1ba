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
enum DeviceStatus: String, Sendable, Equatable, CaseIterable {
    case live, delayed, silent

    /// The state at `nowMillis`.
    static func of(lastFixMillis: Int64?, lastContactMillis: Int64, expectedSeconds: Int, nowMillis: Int64) -> DeviceStatus {
        let window = Int64(max(expectedSeconds, 1)) * 2_000
        if let fix = lastFixMillis, nowMillis - fix <= window { return .live }
        if nowMillis - lastContactMillis <= window { return .delayed }
        return .silent
    }
}

/// The status rule for tests outside the module.
public enum DeviceStatusProbe {
    /// `DeviceStatus.of(…)` as its raw value.
    public static func of(fix: Int64?, contact: Int64, expected: Int, now: Int64) -> String {
        DeviceStatus.of(lastFixMillis: fix, lastContactMillis: contact, expectedSeconds: expected, nowMillis: now).rawValue
    }
}
