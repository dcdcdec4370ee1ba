import Foundation

/// The end-of-run check that nothing sent was lost: every fix id sent (and acknowledged)
/// must be stored exactly once, read back through the read API.
public struct ReadBackCheck: Sendable, Equatable {
    /// Fix ids sent.
    public var sent = 0
    /// Sent but not stored.
    public var missing: [String] = []
    /// Stored more than once (the extra copies).
    public var duplicated: [String] = []
    /// Stored for the checked devices but never sent by this run.
    public var unexpected = 0

    /// Nothing missing and nothing stored twice.
    public var isClean: Bool { missing.isEmpty && duplicated.isEmpty }

    /// Compares the ids sent per device with the ids the read API returned per device.
    public static func compare(sent: [String: [String]], stored: [String: [String]]) -> ReadBackCheck {
        var check = ReadBackCheck()
        for (device, ids) in sent {
            var seen: [String: Int] = [:]
            for id in stored[device] ?? [] { seen[id, default: 0] += 1 }
            let expected = Set(ids)
            check.sent += ids.count
            for id in ids where seen[id, default: 0] == 0 { check.missing.append(id) }
            for (id, n) in seen where n > 1 { check.duplicated += Array(repeating: id, count: n - 1) }
            check.unexpected += seen.keys.filter { !expected.contains($0) }.count
        }
        check.missing.sort()
        check.duplicated.sort()
        return check
    }

    /// One line for the report.
    public var summary: String {
        "read back \(sent) fixes: \(missing.count) lost, \(duplicated.count) stored twice, \(unexpected) not sent by this run"
            + (missing.isEmpty ? "" : " (first lost: \(missing.prefix(3).joined(separator: ", ")))")
    }
}

/// The viewers' check: every viewer received every event exactly once.
public struct DeliveryCheck: Sendable, Equatable {
    /// Events expected at every viewer.
    public var events = 0
    /// Viewers.
    public var viewers = 0
    /// Deliveries missing (event × viewer pairs).
    public var missing = 0
    /// Deliveries beyond one per viewer.
    public var extra = 0

    /// Every viewer got every event once.
    public var isClean: Bool { missing == 0 && extra == 0 }

    /// Checks `ids` against how many viewers received each (`deliveries`).
    public static func compare(ids: [String], viewers: Int, deliveries: (String) -> Int) -> DeliveryCheck {
        var check = DeliveryCheck(events: ids.count, viewers: viewers)
        for id in ids {
            let n = deliveries(id)
            if n < viewers { check.missing += viewers - n } else { check.extra += n - viewers }
        }
        return check
    }

    /// One line for the report.
    public var summary: String {
        "delivered \(events) events to \(viewers) viewers: \(missing) deliveries missing, \(extra) extra"
    }
}
