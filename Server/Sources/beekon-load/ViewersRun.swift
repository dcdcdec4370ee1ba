import BeekonLoad
import BeekonPrimitives
import NIOHTTP1
import Foundation

/// Viewers mode: `count` SSE viewers on `GET /v1/live` spread over the URLs (admin key, or none
/// with auth off), the servers' RSS idle, then devices uploading at a steady open-loop rate.
/// Commit→event latency is measured from the moment an upload was sent (its 200 follows the
/// commit, so this is an upper bound) to the event's arrival at each viewer; from the upload's
/// 200 (after the commit, so a lower bound) it is printed too. The difference between the two is
/// the commit; the servers' `/metrics` split the rest into the log read and the fan-out, and
/// the CPU each process used shows whether the viewers' reader (this process) keeps up.
/// With `--warmup S`, S seconds of uploads at the rate come first: their events must reach
/// every viewer, but their latency is not counted.
struct ViewersRun {
    let http: LoadHTTP
    let fleet: DeviceFleet
    let urls: [String]
    let options: BeekonLoadCommand

    func run(viewers: Int) async throws -> Bool {
        let ports = try urls.map { url -> Int in
            guard let u = URL(string: url), let port = u.port, ["127.0.0.1", "localhost"].contains(u.host ?? "") else {
                throw LoadHTTP.Failure(description: "viewers mode needs loopback URLs with a port, not \(url)")
            }
            return port
        }
        let rssBefore = options.serverPid.map(Self.rssKiB)
        let now = ViewerFleet.monotonicSeconds
        var fleets: [ViewerFleet] = []
        defer { for f in fleets { f.close() } }
        let opened = now()
        let overflowsBefore = Self.listenOverflows()
        for (i, port) in ports.enumerated() {
            let share = viewers / ports.count + (i < viewers % ports.count ? 1 : 0)
            fleets.append(try ViewerFleet(port: port, count: share, authorization: http.admin))
        }
        try await waitUntil("every viewer answered") { fleets.reduce(0) { $0 + $1.answered } >= viewers }
        say(
            String(
                format: "viewers: %d streams open in %.1f s (listen-queue overflows meanwhile, whole machine: %d)", viewers, now() - opened,
                Self.listenOverflows() - overflowsBefore))
        // Warm-up: one upload to each server (so none answers its first upload in the measured
        // run), whose events reach every stream, so each is delivering, then idle.
        for (i, url) in urls.enumerated() {
            let warm = fleet.upload(device: i % fleet.installs.count, fixes: 1, gzip: false)
            guard try await post(warm, to: url).status == 200 else { throw LoadHTTP.Failure(description: "warm-up upload failed") }
            fleet.acknowledged(warm)
        }
        try await waitUntil("the warm-up events at every viewer") { fleets.reduce(0) { $0 + $1.received } >= viewers * urls.count }
        let rssIdle = options.serverPid.map(Self.rssKiB)
        if !options.serverPid.isEmpty {
            let grown = zip(rssBefore, rssIdle).reduce(0) { $0 + $1.1 - $1.0 }
            say(
                String(
                    format: "RSS idle: %@ KiB → %@ KiB (servers %@): %.2f MiB per 1,000 idle viewers",
                    rssBefore.map(String.init).joined(separator: "+"), rssIdle.map(String.init).joined(separator: "+"),
                    options.serverPid.map(String.init).joined(separator: ","), Double(grown) / 1024 * 1000 / Double(viewers)))
        }

        // A warm-up at the rate (`--warmup`), not counted: a server's first uploads at a rate
        // open database connections and prepare statements, and a device's first upload binds
        // its credential; at 5 uploads/s the slowest answers of a run were all in its first 1.5 s.
        var warmIDs: [String] = []
        if options.warmup > 0 {
            let (warm, failed, count) = await uploadPhase(seconds: options.warmup, now: now)
            warmIDs = warm.ids
            let report = warm.answers(elapsed: options.warmup)
            say(
                String(
                    format: "warm-up at %.0f/s × %g s (not counted): %d uploads, upload → 200 p99 %.2f ms, %d failed%@", options.rate,
                    options.warmup, count, report.millis(at: 99), failed.value, failed.reasons))
            guard failed.value == 0 else { return false }
            // Its deliveries end before the measured run starts, so they neither delay it nor count in its CPU.
            let warmed = (warmIDs.count + urls.count) * viewers
            try await waitUntil("the warm-up's events at every viewer", timeout: 120) { fleets.reduce(0) { $0 + $1.received } >= warmed }
        }
        let cpuBefore = cpuSeconds()
        let (sentAt, failed, count) = await uploadPhase(seconds: options.duration, now: now)
        let ids = sentAt.ids
        let expected = (warmIDs.count + ids.count + urls.count) * viewers
        do {
            try await waitUntil("every event at every viewer", timeout: 120) { fleets.reduce(0) { $0 + $1.received } >= expected }
        } catch {
            say("\(error) (120 s after the last upload)")
        }
        let rssLoaded = options.serverPid.map(Self.rssKiB)
        let cpuAfter = cpuSeconds()
        let recorder = LatencyRecorder()
        let afterAck = LatencyRecorder()
        for (id, t0, t1) in sentAt.all {
            for fleet in fleets {
                for arrival in fleet.arrivals(of: id) {
                    recorder.record(.nanoseconds(Int64((arrival - t0) * 1e9)))
                    afterAck.record(.nanoseconds(Int64(max(0, arrival - t1) * 1e9)))
                }
            }
        }
        let delivered = recorder.report(elapsed: options.duration)
        // The warm-up's events must reach every viewer too; only their latency is not counted.
        let check = DeliveryCheck.compare(ids: warmIDs + ids, viewers: viewers) { id in
            fleets.reduce(0) { $0 + $1.arrivals(of: id).count }
        }
        say(
            String(
                format: "uploads: %d at %.0f/s × %.0f s, %d fixes each, %d failed%@", count, options.rate, options.duration,
                options.batch, failed.value, failed.reasons))
        let closed = fleets.reduce(0) { $0 + $1.closedByServer }
        if closed > 0 { say("viewers: \(closed) streams closed by the server during the run") }
        say(
            String(
                format:
                    "commit→event latency (upload sent → event at viewer), %d deliveries: p50 %.2f ms p90 %.2f ms p99 %.2f ms p99.9 %.2f ms max %.2f ms",
                delivered.ok, delivered.millis(at: 50), delivered.millis(at: 90), delivered.millis(at: 99), delivered.millis(at: 99.9),
                delivered.millis(at: 100)))
        let acked = afterAck.report(elapsed: options.duration)
        let committed = sentAt.answers(elapsed: options.duration)
        say(
            String(
                format: "  of which upload sent → 200 (the commit), per fix: p50 %.2f ms p99 %.2f ms; "
                    + "200 → event at viewer: p50 %.2f ms p99 %.2f ms",
                committed.millis(at: 50), committed.millis(at: 99), acked.millis(at: 50), acked.millis(at: 99)))
        let servers = zip(cpuBefore.servers, cpuAfter.servers).map { $0.1 - $0.0 }
        say(
            String(
                format: "CPU during the uploads and delivery: servers %@ s, beekon-load (viewers' reader and uploads) %.1f s",
                servers.map { String(format: "%.1f", $0) }.joined(separator: "+"), cpuAfter.own - cpuBefore.own))
        for url in urls { if let stages = await liveStages(url) { say("  \(url): \(stages)") } }
        if !options.serverPid.isEmpty { say("RSS under load: \(rssLoaded.map(String.init).joined(separator: "+")) KiB") }
        say(check.summary)
        return check.isClean && failed.value == 0
    }

    /// Uploads at `options.rate` for `seconds`, open loop, each to the next server in turn:
    /// when each acknowledged fix was sent and answered, and the uploads that failed.
    private func uploadPhase(
        seconds: Double, now: @escaping @Sendable () -> Double
    ) async -> (sent: SentTimes, failed: FailedUploadCount, count: Int) {
        let schedule = OpenLoopSchedule(rate: options.rate, duration: seconds)
        let uploads = (0..<schedule.count).map { fleet.upload(device: $0 % fleet.installs.count, fixes: options.batch, gzip: options.gzip) }
        let sentAt = SentTimes()
        let failed = FailedUploadCount()
        await OpenLoop.run(schedule, clock: ContinuousClock()) { index, _ in
            let upload = uploads[index]
            let t0 = now()
            do {
                let (status, message) = try await post(upload, to: urls[index % urls.count])
                if status == 200 {
                    fleet.acknowledged(upload)
                    sentAt.note(upload.fixIDs, t0, now())
                } else {
                    // The server's own reason, so a failure can be traced to the step that refused it.
                    failed.note("HTTP \(status) \(message)")
                }
            } catch {
                failed.note("\(error)")
            }
        }
        return (sentAt, failed, schedule.count)
    }

    /// The upload's status and, when it was not 200, the answer's `message` (the server's reason).
    private func post(_ upload: DeviceFleet.Upload, to base: String) async throws -> (status: Int, message: String) {
        let (status, body) = try await http.call(
            .POST, base + "/v1/locations", body: upload.body, headers: fleet.headers(upload), authorization: fleet.authorization(upload))
        guard status != 200 else { return (status, "") }
        let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        return (status, (object?["message"] as? String) ?? String(buffer: body).prefix(120).description)
    }

    private func waitUntil(_ what: String, timeout: Double = 300, _ condition: () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(timeout))
        while !condition() {
            guard clock.now < deadline else { throw LoadHTTP.Failure(description: "timed out waiting for \(what)") }
            try await clock.sleep(for: .milliseconds(10))
        }
    }

    private static func rssKiB(_ pid: Int32) -> Int { ViewerFleet.rssKiB(pid: pid) }

    /// The kernel's count of connections dropped because a listen queue was full (`TcpExt:
    /// ListenOverflows` in `/proc/net/netstat`, every socket of the machine; 0 when unreadable).
    /// A listen backlog too small for a burst of viewers shows here: each dropped handshake
    /// waits for a retransmission (1 s, then 3 s, …) before it is accepted.
    static func listenOverflows() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/net/netstat", encoding: .utf8) else { return 0 }
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("TcpExt:") }
        guard lines.count >= 2 else { return 0 }
        let names = lines[0].split(separator: " ")
        let values = lines[1].split(separator: " ")
        guard let i = names.firstIndex(of: "ListenOverflows"), i < values.count else { return 0 }
        return Int(values[i]) ?? 0
    }

    /// CPU seconds (user + system) used so far by this process and by each server.
    private func cpuSeconds() -> (own: Double, servers: [Double]) {
        (ProcessCPU.seconds(pid: getpid()), options.serverPid.map(ProcessCPU.seconds))
    }

    /// The server's live-stream stages from its `/metrics` (mean and max of the log read and of
    /// the fan-out per event loop), or nil when it does not report them.
    private func liveStages(_ base: String) async -> String? {
        guard let (status, body) = try? await http.call(.GET, base + "/metrics", authorization: http.admin), status == 200 else {
            return nil
        }
        var values: [String: Double] = [:]
        for line in String(buffer: body).split(separator: "\n") where line.hasPrefix("beekon_live_") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let v = Double(parts[1]) { values[String(parts[0])] = v }
        }
        func mean(_ name: String) -> Double {
            guard let n = values[name + "_count"], n > 0 else { return 0 }
            return (values[name + "_sum"] ?? 0) / n * 1000
        }
        guard values["beekon_live_fanout_seconds_count"] != nil else { return nil }
        return String(
            format: "log read mean %.2f ms max %.2f ms (%.0f reads); fan-out per event loop mean %.2f ms max %.2f ms (%.0f)",
            mean("beekon_live_read_seconds"), (values["beekon_live_read_seconds_max"] ?? 0) * 1000,
            values["beekon_live_read_seconds_count"] ?? 0, mean("beekon_live_fanout_seconds"),
            (values["beekon_live_fanout_seconds_max"] ?? 0) * 1000, values["beekon_live_fanout_seconds_count"] ?? 0)
    }
}

/// When each acknowledged fix's upload was sent and answered 200 (monotonic seconds).
final class SentTimes: Sendable {
    private let times = Locked<[(String, Double, Double)]>([])

    func note(_ ids: [String], _ t0: Double, _ t1: Double) { times.withLock { times in times += ids.map { ($0, t0, t1) } } }
    var all: [(String, Double, Double)] { times.value }
    var ids: [String] { all.map(\.0) }

    /// Upload sent → 200, one value per acknowledged fix, over a phase of `elapsed` seconds.
    func answers(elapsed: Double) -> LatencyReport {
        let recorder = LatencyRecorder()
        for (_, t0, t1) in all { recorder.record(.nanoseconds(Int64((t1 - t0) * 1e9))) }
        return recorder.report(elapsed: elapsed)
    }
}

/// Uploads not answered 200, and why.
final class FailedUploadCount: Sendable {
    private let why = Locked<[String: Int]>([:])

    func note(_ reason: String) { why.withLock { $0[reason, default: 0] += 1 } }
    var value: Int { why.withLock { $0.values.reduce(0, +) } }
    /// ` (reason ×n, …)`, or empty.
    var reasons: String {
        let all = why.value
        return all.isEmpty ? "" : " (" + all.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") + ")"
    }
}
