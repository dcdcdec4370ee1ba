import BeekonLoad
import IngestLoopback
import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import Logging
import ServiceLifecycle
#if canImport(Glibc)
    import Glibc
#endif

/// Latency figures in milliseconds.
struct Latency {
    var p50: Double, p99: Double, count: Int
}

extension Bench {
    nonisolated(unsafe) static var uploaded: [Int: Int] = [:]
    static let ids = UUIDv7Generator()

    /// Runs servers for `configs` (port 0) while `body` runs with their ports.
    static func withServers(_ configs: [IngestConfiguration], logger: Logger, _ body: ([Int]) async throws -> Void) async throws {
        var groups: [(ServiceGroup, Task<Void, any Error>)] = []
        var ports: [Int] = []
        for var config in configs {
            config.port = 0
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
            let app = try IngestServer.buildApplication(config, logger: logger, onListening: { _, port in continuation.yield(port) })
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: logger))
            let task = Task { try await group.run() }
            for await port in stream {
                ports.append(port)
                break
            }
            groups.append((group, task))
        }
        try await body(ports)
        for (group, task) in groups {
            await group.triggerGracefulShutdown()
            try? await task.value
        }
    }

    /// POSTs one envelope (identity JSON) and reads the answer; returns the status.
    static func upload(_ port: Int, _ e: WireEnvelope) throws -> Int {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeout: 60) else { throw BenchFailure("cannot connect") }
        defer { close(fd) }
        let body = WireJSONWriter.encode(e)
        let head =
            "POST /v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard LoopbackSocket.sendAll(fd, Array(head.utf8) + body) else { throw BenchFailure("cannot send") }
        var reader = HTTPMessageReader(fd: fd)
        guard let status = reader.readHead()?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw BenchFailure("no answer")
        }
        uploaded[port, default: 0] += e.locations.count
        return status
    }

    static func envelope(fixes: Int, install: UUID) -> WireEnvelope {
        let t = WireTimestamp(Date()).millis
        let locations = (0..<fixes).map { i in
            WireLocation(
                id: ids.next(), timestamp: WireTimestamp(millis: t + Int64(i)), trigger: .interval, motion: .moving,
                latitude: 52.52 + Double(i % 1000) * 1e-5, longitude: 13.405, accuracy: 5)
        }
        return WireEnvelope(
            batchId: ids.next(), sessionId: ids.next(), sentAt: WireTimestamp(Date()),
            device: WireDevice(installId: install, platform: "linux", sdkVersion: "bench"),
            locations: locations, geofenceEvents: [])
    }

    /// Uploads `batches` one-fix batches at 20/s, alternating over `ports`; latency from sending
    /// the upload (whose 200 follows the commit) to the event's arrival at each viewer.
    static func measure(ports: [Int], fleet: ViewerFleet, viewers: Int, batches: Int) async throws -> Latency {
        try await measure(ports: ports, fleets: [fleet], viewers: viewers, batches: batches)
    }

    static func measure(ports: [Int], fleets: [ViewerFleet], viewers: Int, batches: Int) async throws -> Latency {
        let install = ids.next()
        // Warm-up: every stream is open and has delivered one event.
        let before = fleets.reduce(0) { $0 + $1.received }
        _ = try upload(ports[0], envelope(fixes: 1, install: install))
        try await waitUntil { fleets.reduce(0) { $0 + $1.received } >= before + viewers }
        var sent: [(String, Double)] = []
        for i in 0..<batches {
            let e = envelope(fixes: 1, install: install)
            let t0 = now()
            guard try upload(ports[i % ports.count], e) == 200 else { throw BenchFailure("upload failed") }
            sent.append((e.locations[0].id.wireString, t0))
            try await Task.sleep(for: .milliseconds(50))
        }
        let target = before + viewers * (batches + 1)
        try await waitUntil { fleets.reduce(0) { $0 + $1.received } >= target }
        var all: [Double] = []
        for (id, t0) in sent {
            for fleet in fleets { all += fleet.arrivals(of: id).map { ($0 - t0) * 1000 } }
        }
        all.sort()
        guard !all.isEmpty else { throw BenchFailure("no deliveries") }
        return Latency(p50: all[all.count / 2], p99: all[min(all.count - 1, Int(Double(all.count) * 0.99))], count: all.count)
    }

    /// Stores `events` fixes (batches of 1,000), then times one viewer reading the whole log from id 0.
    static func backfillRate(port: Int, events: Int) async throws -> (seconds: Double, perSecond: Double) {
        let install = ids.next()
        var left = events
        while left > 0 {
            let n = min(1_000, left)
            guard try upload(port, envelope(fixes: n, install: install)) == 200 else { throw BenchFailure("upload failed") }
            left -= n
        }
        let total = uploaded.values.reduce(0, +)
        let t0 = now()
        let fleet = try ViewerFleet(port: port, count: 1, lastEventID: "0")
        defer { fleet.close() }
        try await waitUntil(timeout: 120) { fleet.received >= events && fleet.received >= min(total, events) }
        let seconds = now() - t0
        return (seconds, Double(fleet.received) / seconds)
    }

    static func waitUntil(timeout: Double = 60, _ condition: () -> Bool) async throws {
        let deadline = now() + timeout
        while !condition() {
            guard now() < deadline else { throw BenchFailure("timed out waiting for events") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
