import ArgumentParser
import BeekonLoad
import BeekonWire
import Foundation
import NIOPosix
#if canImport(Glibc)
    import Glibc
#endif

/// `beekon-load`: an open-loop load generator for running `beekon-ingest` servers (issue 32;
/// `scripts/load.sh` builds and starts them). Devices mode uploads batches on a fixed schedule
/// and reads every fix back at the end; viewers mode holds SSE streams open while devices
/// upload at a steady rate and checks every viewer got every event. Exits 1 when anything sent
/// was not stored exactly once, or not delivered to every viewer.
@main
struct BeekonLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beekon-load", abstract: "Open-loop load for beekon-ingest: devices uploading, SSE viewers watching.")

    @Option(help: "Base URL of a server (repeatable; requests go round-robin).") var url: [String] = []
    @Option(help: "Admin API key: enrolls the devices (enrollment code + /oauth/token), reads back, opens viewers. Omit for auth off.")
    var adminKey: String?
    @Option(help: "Simulated devices (each enrolled, each with its own access token).") var devices = 100
    @Option(help: "Fixes per upload.") var batch = 10
    @Option(help: "Uploads per second, open loop (the first step's rate with --step).") var rate = 100.0
    @Option(help: "Seconds per run (per step with --step).") var duration = 10.0
    @Option(
        help:
            "Seconds at --rate before the measured run, not counted in the latency (devices mode reads its fixes back with the rest; viewers mode checks their delivery)."
    )
    var warmup = 0.0
    @Flag(help: "Send bodies gzip-compressed.") var gzip = false
    @Option(help: "Step the rate up by this many req/s per step until saturation.") var step: Double?
    @Option(help: "Highest rate to step to.") var maxRate = 10_000.0
    @Option(help: "p99 (ms) above which a step counts as saturated.") var p99Limit = 100.0
    @Option(help: "SSE viewers on GET /v1/live, spread over the URLs (loopback URLs only); devices upload at --rate meanwhile.")
    var viewers: Int?
    @Option(help: "PID of a server to read CPU (each step) and RSS (viewers mode) from (repeatable).") var serverPid: [Int32] = []
    @Option(help: "Most HTTP/1.1 connections per server URL.") var connections = 512

    func validate() throws {
        if url.isEmpty { throw ValidationError("give at least one --url") }
        if devices < 1 || batch < 1 || !(rate > 0 && rate.isFinite) || !(duration > 0 && duration.isFinite) {
            throw ValidationError("devices, batch, rate, duration must be positive (and finite)")
        }
        if !(warmup >= 0 && warmup.isFinite) { throw ValidationError("--warmup must be 0 or more seconds") }
    }

    func run() async throws {
        let limit = raiseDescriptorLimit()
        let urls = url.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        let http = LoadHTTP(connectionsPerHost: connections, admin: adminKey)
        let ok: Bool
        do {
            let fleet = DeviceFleet(count: devices, now: { Date() })
            let installs = fleet.installs.map(\.wireString)
            say(
                "beekon-load: descriptor limit \(limit); \(urls.count) server(s); \(devices) devices, batch \(batch)\(gzip ? ", gzip" : "")"
            )
            fleet.tokens = try await http.enroll(installs, baseURL: urls[0])
            say(
                "credentials: \(adminKey == nil ? "none (auth off)" : "\(fleet.tokens.count) devices enrolled with one enrollment code (POST /oauth/token)")"
            )
            if let viewers {
                ok = try await ViewersRun(http: http, fleet: fleet, urls: urls, options: self).run(viewers: viewers)
            } else {
                // The timed uploads get an event loop of their own (OpenLoopSender).
                let targets = try urls.map(UploadTarget.init(url:))
                let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                let sender = try OpenLoopSender(targets: targets.map(\.sender), maxConnections: connections, eventLoop: loop.next())
                let outcome: Result<Bool, any Error>
                do {
                    outcome = .success(
                        try await DevicesRun(http: http, fleet: fleet, urls: urls, options: self, targets: targets, sender: sender).run())
                } catch {
                    outcome = .failure(error)
                }
                try? await sender.close().get()
                try? await loop.shutdownGracefully()
                ok = try outcome.get()
            }
        } catch {
            try? await http.client.shutdown()
            throw error
        }
        try await http.client.shutdown()
        if !ok { throw ExitCode(1) }
    }

    /// Raises the soft descriptor limit to the hard one; returns the new soft limit.
    private func raiseDescriptorLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return UInt64(limit.rlim_cur)
    }
}

/// Writes one line to standard output at once (unbuffered, so progress shows when redirected to a file).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
