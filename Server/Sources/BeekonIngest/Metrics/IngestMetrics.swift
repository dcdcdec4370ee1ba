import Prometheus

/// The server's Prometheus metrics, in a registry owned by one app instance
/// (no global bootstrap, so several apps can run in one process, as in tests).
package final class IngestMetrics: Sendable {
    /// The registry `/metrics` renders.
    package let registry = PrometheusCollectorRegistry()

    let batchesStored: Counter, batchesDuplicate: Counter
    let fixesStored: Counter, fixesDuplicate: Counter
    let eventsStored: Counter, eventsDuplicate: Counter
    let storeFailures: Counter
    let tokenRefreshOK: Counter, tokenRefreshRejected: Counter
    let ingestDuration: DurationHistogram
    private let rejectCounters: [Int: Counter]
    private let pushCounters: [String: Counter]
    private let nudgeCounters: [String: Counter]
    private let shareRefusedCounters: [String: Counter]

    /// Outcomes counted in `beekon_ingest_share_refused_total{outcome}`: share tokens refused,
    /// counted instead of written to the access log (issue 28).
    static let shareRefusals = ["expired", "revoked", "unknown"]

    /// Results counted in `beekon_ingest_pushes_total{provider,result}` (issue 30).
    static let pushResults = ["sent", "retried", "failed", "token_removed", "disabled"]

    /// Statuses counted in `beekon_ingest_rejected_total`.
    static let rejectStatuses = [400, 401, 413, 415, 422]

    /// Creates all series up front so they show as 0 before the first request.
    package init() {
        let registry = self.registry
        func counter(_ name: String, _ labels: [(String, String)], _ help: String) -> Counter {
            registry.makeCounter(descriptor: Self.name(name, "total", help), labels: labels)
        }
        let batches = "batches"
        let fixes = "fixes"
        let events = "geofence_events"
        let refresh = "token_refresh"
        batchesStored = counter(batches, [("result", "stored")], "Batches accepted, by whether the batch id was new")
        batchesDuplicate = counter(batches, [("result", "duplicate")], "Batches accepted, by whether the batch id was new")
        fixesStored = counter(fixes, [("result", "stored")], "Fixes received, stored or skipped as duplicates")
        fixesDuplicate = counter(fixes, [("result", "duplicate")], "Fixes received, stored or skipped as duplicates")
        eventsStored = counter(events, [("result", "stored")], "Geofence events received, stored or skipped as duplicates")
        eventsDuplicate = counter(events, [("result", "duplicate")], "Geofence events received, stored or skipped as duplicates")
        storeFailures = counter("store_failures", [], "Requests answered 503 because the database failed")
        tokenRefreshOK = counter(refresh, [("result", "ok")], "Refresh-token exchanges")
        tokenRefreshRejected = counter(refresh, [("result", "rejected")], "Refresh-token exchanges")
        var rejects: [Int: Counter] = [:]
        for status in Self.rejectStatuses {
            rejects[status] = counter("rejected", [("status", String(status))], "Ingest requests refused, by status")
        }
        rejectCounters = rejects
        var pushes: [String: Counter] = [:]
        for provider in PushToken.Provider.allCases {
            for result in Self.pushResults {
                pushes["\(provider.rawValue)/\(result)"] = counter(
                    "pushes", [("provider", provider.rawValue), ("result", result)],
                    "Silent locate pushes: sent, retried after a back-off, failed, token removed (provider said invalid), refused by a disabled sender"
                )
            }
        }
        pushCounters = pushes
        var nudges: [String: Counter] = [:]
        for provider in PushToken.Provider.allCases {
            for result in Self.pushResults {
                nudges["\(provider.rawValue)/\(result)"] = counter(
                    "nudges", [("provider", provider.rawValue), ("result", result)],
                    "Visible nudges to devices that stopped reporting, by result as for pushes")
            }
        }
        nudgeCounters = nudges
        var refused: [String: Counter] = [:]
        for outcome in Self.shareRefusals {
            refused[outcome] = counter(
                "share_refused", [("outcome", outcome)],
                "Share tokens refused (expired, revoked, unknown): counted here, never written to the access log")
        }
        shareRefusedCounters = refused
        ingestDuration = registry.makeDurationHistogram(
            descriptor: Self.name("request_duration", "seconds", "Time to answer an ingest request, including the commit"),
            buckets: [
                .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
            ])
    }

    /// `beekon_ingest_<metric>_<unit>`.
    static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "beekon", subsystem: "ingest", metricName: metric, unitName: unit, helpText: help)
    }

    /// Counts an ingest request refused with `status`.
    func rejected(_ status: Int) {
        rejectCounters[status]?.increment()
    }

    /// Counts a push attempt's result (`pushResults`).
    func pushed(_ provider: String, _ result: String) {
        pushCounters["\(provider)/\(result)"]?.increment()
    }

    /// Counts a nudge attempt's result (`pushResults`).
    func nudged(_ provider: String, _ result: String) {
        nudgeCounters["\(provider)/\(result)"]?.increment()
    }

    /// Counts a refused share token (`shareRefusals`).
    func shareRefused(_ outcome: String) {
        shareRefusedCounters[outcome]?.increment()
    }

    /// Counts a stored batch.
    func stored(_ r: IngestResult) {
        (r.duplicateBatch ? batchesDuplicate : batchesStored).increment()
        fixesStored.increment(by: Int64(r.locationsStored))
        fixesDuplicate.increment(by: Int64(r.locationsDuplicate))
        eventsStored.increment(by: Int64(r.eventsStored))
        eventsDuplicate.increment(by: Int64(r.eventsDuplicate))
    }

    /// The Prometheus text exposition.
    package func render() -> [UInt8] { registry.emitToBuffer() }
}

extension Duration {
    /// The duration in seconds, for the timings `/metrics` reports (the writer's phases, the
    /// live stream's stages).
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
