import Foundation

/// The table printed at the end of a run (rows `| name | value |`, then PASS or FAIL).
struct ChaosSummary {
    /// The fault kinds listed, in order.
    static let faultKinds = [
        "lost_2xx", "drop_request", "http_500", "storm_503", "storm_429", "slow", "stall_past_timeout", "kill_agent_inflight",
        "kill_agent", "kill_server", "pg_restart", "token_outage", "token_refused", "lost_token_answer", "kill_agent_refresh",
        "disk_full",
    ]

    var options: ChaosOptions
    var totals: TrialResult
    var faults: [String: Int]
    var diskFullOn: Bool
    var elapsedSeconds: Double
    var failedTrials: [Int]

    /// The table and the verdict line.
    var text: String {
        var rows: [(String, String)] = [
            ("trials", "\(options.trials)"), ("seed", "\(options.seed)"), ("store", options.store.rawValue),
            ("agents per trial", "\(options.agents)"), ("auth", options.auth.rawValue), ("parallel trials", "\(options.jobs)"),
            ("elapsed (s)", String(format: "%.0f", elapsedSeconds)),
        ]
        rows += Self.faultKinds.filter { $0 != "pg_restart" || options.store == .postgres }.map {
            ("faults: \($0)", "\(faults[$0, default: 0])")
        }
        if !diskFullOn { rows.append(("disk_full", "off (no tmpfs)")) }
        let t = totals
        rows += [
            ("upstream unreachable (server down)", "\(faults["upstream_unreachable", default: 0])"),
            ("fixes stored (agents)", "\(t["stored"])"), ("fixes at server", "\(t["at_server"])"),
            ("lost", "\(t["lost"])"), ("duplicated", "\(t["duplicated"])"),
            ("geofence events stored (agents)", "\(t["events_stored"])"), ("geofence events at server", "\(t["events_at_server"])"),
            ("geofence events lost", "\(t["events_lost"])"), ("geofence events duplicated", "\(t["events_duplicated"])"),
            ("live viewers: stored fixes never streamed", "\(t["viewer_lost"])"),
            ("live viewers: fixes streamed twice / ids not increasing", "\(t["viewer_dup"])"),
            ("foreign (never stored)", "\(t["foreign"])"), ("session id changes", "\(t["session_changes"])"),
            ("server 5xx/4xx to good batch", "\(t["server_errors"])"), ("crashes", "\(t["crashes"])"),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        let rule = "+" + String(repeating: "-", count: width + 2) + "+" + String(repeating: "-", count: 12) + "+"
        var lines = [rule]
        for (name, value) in rows {
            let pad = String(repeating: " ", count: max(0, 10 - value.count))
            lines.append("| \(name.padding(toLength: width, withPad: " ", startingAt: 0)) | \(pad)\(value) |")
        }
        lines.append(rule)
        lines.append(failedTrials.isEmpty ? "PASS" : "FAIL (trials \(failedTrials))")
        return lines.joined(separator: "\n")
    }
}
