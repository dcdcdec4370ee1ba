import BeekonLoad
import BeekonPrimitives
import NIOCore
import NIOHTTP1
import Foundation

/// Devices mode: open-loop uploads at one rate or stepped rates, then retries of anything not
/// answered 200 (as the SDK would), then the read-back of every acknowledged fix.
struct DevicesRun {
    let http: LoadHTTP
    let fleet: DeviceFleet
    let urls: [String]
    let options: BeekonLoadCommand
    /// The servers, parsed from `urls` (same order).
    let targets: [UploadTarget]
    /// The timed uploads' sender (the retries and the read-back go through `http`).
    let sender: OpenLoopSender

    func run() async throws -> Bool {
        let rule = SaturationRule(p99LimitMillis: options.p99Limit)
        let rates =
            options.step.map { SaturationRule.steps(start: options.rate, step: $0, maximum: options.maxRate) } ?? [options.rate]
        var held: Double?
        var failedUploads: [DeviceFleet.Upload] = []
        // A fresh server's first seconds (connections opening, caches and the database's files
        // growing) are not its steady state: a warm-up at the first rate, reported apart, keeps
        // them out of the first step's p99. Its uploads count for the read-back like any other.
        if options.warmup > 0 {
            let (report, failed, _) = try await runStep(rate: options.rate, seconds: options.warmup)
            failedUploads += failed
            say(String(format: "warm-up at %.0f req/s × %g s (not counted): ", options.rate, options.warmup) + report.summary)
        }
        for target in rates {
            let (report, failed, cpu) = try await runStep(rate: target, seconds: options.duration)
            failedUploads += failed
            say(String(format: "rate %.0f req/s × %.0f s: ", target, options.duration) + report.summary)
            if let cpu { say(cpu) }
            guard options.step != nil else { break }
            if let reason = rule.verdict(target: target, report) {
                say(
                    "saturation: " + (held.map { String(format: "%.0f req/s held", $0) } ?? "not even the first step held")
                        + String(format: "; at %.0f req/s: %@", target, reason))
                break
            }
            held = target
            if target == rates.last { say(String(format: "saturation: not reached; %.0f req/s held", target)) }
        }
        let retried = try await retry(failedUploads)
        let check = try await http.readBack(sent: fleet.acknowledgedFixes, baseURL: urls[0])
        say(check.summary)
        if retried > 0 { say("retried \(failedUploads.count) failed uploads; \(retried) still failed after 5 tries") }
        return check.isClean && retried == 0
    }

    /// One open-loop run at `rate` for `seconds`; its report, the uploads that were not answered
    /// 200, and with `--server-pid` a line of the CPU the servers and this tool used meanwhile
    /// (per upload answered: a regression in the server's CPU per upload shows as a number).
    /// The uploads go out through ``OpenLoopSender`` (one event loop, no task per request); the
    /// requests are prepared before the first one is due.
    private func runStep(rate: Double, seconds: Double) async throws -> (LatencyReport, [DeviceFleet.Upload], String?) {
        let schedule = OpenLoopSchedule(rate: rate, duration: seconds)
        let uploads = (0..<schedule.count).map { fleet.upload(device: $0 % fleet.installs.count, fixes: options.batch, gzip: options.gzip) }
        let requests = uploads.indices.map { prepared(uploads[$0], to: $0 % targets.count) }
        let recorder = LatencyRecorder()
        let failed = Locked<[DeviceFleet.Upload]>([])
        let last = Locked(Duration.zero)
        let clock = ContinuousClock()
        let started = clock.now
        let cpuBefore = (own: ProcessCPU.seconds(pid: getpid()), servers: options.serverPid.map(ProcessCPU.seconds))
        try await sender.send(requests, on: schedule) { answer in
            last.withLock { $0 = max($0, answer.answeredAfter) }
            recorder.record(answer.latency, failure: answer.failure)
            let upload = uploads[answer.index]
            if answer.failure == nil { fleet.acknowledged(upload) } else { failed.withLock { $0.append(upload) } }
        }.get()
        // Achieved = answered / (first due → last answer), never over the scheduled window: a run
        // whose answers keep up achieves its target; one that falls behind shows it.
        let seconds = max(Self.seconds(last.value), Double(schedule.count) / rate)
        let report = recorder.report(elapsed: seconds)
        var cpu: String?
        if !options.serverPid.isEmpty {
            let wall = max(1e-3, Self.seconds(clock.now - started))
            let servers = options.serverPid.map(ProcessCPU.seconds).reduce(0, +) - cpuBefore.servers.reduce(0, +)
            let own = ProcessCPU.seconds(pid: getpid()) - cpuBefore.own
            let answered = max(1, schedule.count - failed.value.count)
            cpu = String(
                format: "  CPU: servers %.2f cores, %.3f ms per upload answered; beekon-load %.2f cores", servers / wall,
                servers * 1000 / Double(answered), own / wall)
        }
        return (report, failed.value, cpu)
    }

    /// `duration` in seconds.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `upload` as a `POST /v1/locations` to target `target`, head and body encoded once.
    private func prepared(_ upload: DeviceFleet.Upload, to target: Int) -> PreparedRequest {
        let base = targets[target]
        var headers = HTTPHeaders([("Host", base.host), ("Content-Length", "\(upload.body.count)")])
        for (name, value) in fleet.headers(upload) { headers.add(name: name, value: value) }
        if let authorization = fleet.authorization(upload) { headers.add(name: "Authorization", value: authorization) }
        return PreparedRequest(
            target: target, head: HTTPRequestHead(version: .http1_1, method: .POST, uri: base.path + "/v1/locations", headers: headers),
            body: ByteBuffer(bytes: upload.body))
    }

    /// POSTs one upload; nil when answered 200, else what went wrong.
    private func send(_ upload: DeviceFleet.Upload, to base: String) async -> String? {
        do {
            let (status, _) = try await http.call(
                .POST, base + "/v1/locations", body: upload.body, headers: fleet.headers(upload),
                authorization: fleet.authorization(upload))
            return status == 200 ? nil : "HTTP \(status)"
        } catch {
            return "\(type(of: error))"
        }
    }

    /// Sends each failed upload again (up to 5 tries, one at a time); how many never got a 200.
    private func retry(_ uploads: [DeviceFleet.Upload]) async throws -> Int {
        var stillFailed = 0
        for (i, upload) in uploads.enumerated() {
            var stored = false
            for _ in 0..<5 where !stored {
                stored = await send(upload, to: urls[i % urls.count]) == nil
            }
            if stored { fleet.acknowledged(upload) } else { stillFailed += 1 }
        }
        return stillFailed
    }
}
