// P2 and P3 (issue 3): upload size and drain throughput of the sync engine.
//
// P2  gzipped upload bytes per fix at batch 1, 10, 100, 1000: real walk fixes stored by the
//     SDK (gate off) and read back, envelopes built like the SDK's SyncEngine builds them
//     (BeekonWire's writer, device linux/0.1.0, no extras) and gzipped like the SDK
//     (zlib deflate level 6, gzip wrapper), versus the same envelope's uncompressed JSON.
//     Samples are the batches (full batches only: 1,856 fixes → 1 batch of 1000).
// P3  drain of 100,000 pending fixes through the real SDK (Beekon actor, db pre-filled
//     with 100,000 pending rows, configure(sync: batchSize 1000) + sync(), the agent's
//     keep-alive AsyncHTTPClientTransport) to a local `beekon-ingest` (release build,
//     SQLite store, fresh database per run), versus a raw client posting the same 100
//     gzipped bodies (captured from the SDK's warm-up run) one after the other with
//     AsyncHTTPClient (keep-alive) to another fresh `beekon-ingest`: the server does the
//     same work in both, so the ratio is what the SDK's durable queue adds. Without the server binary (BEEKON_INGEST_BINARY, else
//     Server/.build/release/beekon-ingest) both go to a POSIX receiver answering 200 at once.

import BeekonGzip
import BeekonLoopback
import BeekonWire
import AsyncHTTPClient
import Beekon
import BeekonHTTPClient
import BeekonTesting
import Foundation
import GRDB
import Logging
import NIOCore
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A logger that keeps the benchmark's output clean.
let quietLogger: Logger = {
    var l = Logger(label: "beekon-bench")
    l.logLevel = .error
    return l
}()

/// The walk's fixes as the SDK stores them (ids, trigger, motion, quality), gate off.
func storedWalk(dir: URL) async throws -> (locations: [Location], source: String) {
    let (fixes, source) = benchFixes()
    let path = dir.appendingPathComponent("p2-walk.sqlite").path
    removeDatabase(path)
    defer { removeDatabase(path) }
    let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: fixes), logger: quietLogger))
    try await beekon.configure(BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
    let stream = beekon.positions
    let consumer = Task { () -> Int in
        var seen = 0
        for await _ in stream {
            seen += 1
            if seen == fixes.count { break }
        }
        return seen
    }
    try await beekon.start()
    _ = await consumer.value
    try await beekon.stop()
    return (try await beekon.history(from: .distantPast, to: .distantFuture), source)
}

// MARK: - P2

func p2(dir: URL) async throws -> [Comparison] {
    let (locations, source) = try await storedWalk(dir: dir)
    let ids = UUIDv7Generator()
    let device = WireDevice(installId: ids.next(), platform: "linux", sdkVersion: "0.1.0", model: nil)
    var results: [Comparison] = []
    for size in [1, 10, 100, 1000] {
        let batches = locations.count / size
        guard batches > 0 else { throw BenchError(description: "P2: only \(locations.count) fixes for batch \(size)") }
        var gz: [Double] = []
        var plain: [Double] = []
        for b in 0..<batches {
            let chunk = locations[(b * size)..<((b + 1) * size)]
            let envelope = WireEnvelope(
                batchId: ids.next(), sessionId: chunk.first!.sessionId, sentAt: WireTimestamp(Date()), device: device,
                extras: [:], locations: chunk.map(\.wire), geofenceEvents: [])
            let json = WireJSONWriter.encode(envelope)
            gz.append(Double(Gzip.compress(json)?.count ?? 0) / Double(size))
            plain.append(Double(json.count) / Double(size))
        }
        let o = Stats(gz)
        let p = Stats(plain)
        results.append(
            Comparison(
                id: "P2/\(size)", what: "gzipped upload bytes per fix at batch \(size)", unit: "B/fix",
                ours: o, baseline: p, ratio: o.median / p.median,
                details: [
                    "batches": "\(batches)", "source": source,
                    "baseline": "the same envelope as uncompressed JSON (BeekonWire writer)",
                ]))
    }
    return results
}

// MARK: - P3

func p3(runs: Int, dir: URL) async throws -> [Comparison] {
    let total = 100_000
    let batches = Double(total / 1000)
    let capture = try BenchReceiver()
    defer { capture.stop() }
    let ingest = IngestProcess.binary()
    var ours: [Double] = []
    var raw: [Double] = []
    var oursCPU: [Double] = []
    var rawCPU: [Double] = []
    var bodies: [Data] = []
    var bytes = 0

    let captureTarget = Target(url: URL(string: "http://127.0.0.1:\(capture.port)/v1/locations")!) { capture.takeBodies().count * 1000 }
    /// A fresh receiver for one measured drain: a real server on a new database, else the capture receiver.
    func receiver(_ name: String) throws -> Target {
        guard let ingest else { return captureTarget }
        let db = dir.appendingPathComponent("p3-server-\(name).sqlite").path
        removeDatabase(db)
        let server = try IngestProcess(binary: ingest, database: db)
        return Target(url: URL(string: "http://127.0.0.1:\(server.port)/v1/locations")!) {
            server.stop()
            defer { removeDatabase(db) }
            return try IngestProcess.storedFixes(database: db)
        }
    }

    for run in 0...runs {  // run 0 warms up and captures the bodies; it is not counted
        let path = dir.appendingPathComponent("p3-\(run).sqlite").path
        removeDatabase(path)
        // The SDK creates and migrates the file; 100,000 pending rows go in in one transaction.
        let transport = try AsyncHTTPClientTransport()
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: path, provider: ArrayProvider(fixes: []),
                logger: quietLogger, transport: transport))
        _ = try await beekon.storeReport()
        let pool = try rawPool(path)
        let ids = UUIDv7Generator()
        let session = ids.next()
        let start = Date().addingTimeInterval(-Double(total))
        try await pool.write { db in
            let statement = try db.makeStatement(sql: insertSQL)
            for i in 0..<total {
                let l = Location(
                    id: ids.next(), sessionId: session, timestamp: start.addingTimeInterval(Double(i)),
                    latitude: 45.27 + sin(Double(i) / 500) * 0.01, longitude: 13.71 + cos(Double(i) / 500) * 0.01,
                    accuracy: 4.5, speed: 1.3, bearing: Double(i % 360), altitude: 260 + Double(i % 20),
                    trigger: .interval, motion: .moving)
                try statement.execute(arguments: arguments(l))
            }
        }
        try pool.close()
        let pending = try await beekon.pendingUploadCount()
        guard pending == total else { throw BenchError(description: "P3: \(pending) pending before the drain") }

        let target = run == 0 ? captureTarget : try receiver("sdk-\(run)")
        let (t, cpu) = try await measureWithCPU {
            try await beekon.configure(BeekonConfig(sync: SyncConfig(url: target.url, batchSize: 1000)))
            try await beekon.sync()
        }
        let left = try await beekon.pendingUploadCount()
        let arrived: Int
        if run == 0 {
            bodies = capture.takeBodies()
            bytes = bodies.reduce(0) { $0 + $1.count }
            arrived = bodies.count * 1000
        } else {
            arrived = try target.finish()
        }
        guard left == 0, arrived == total else {
            throw BenchError(description: "P3: \(left) rows left, \(arrived) fixes arrived (status \(beekon.currentSyncStatus))")
        }
        if run > 0 {
            ours.append(t)
            oursCPU.append(cpu * 1000 / batches)
        }
        await beekon.shutdown()
        await transport.shutdown()
        removeDatabase(path)
        guard run > 0 else { continue }

        // Baseline: the same gzipped bodies, posted one after the other with AsyncHTTPClient (keep-alive).
        let base = try receiver("raw-\(run)")
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let (tr, trCPU) = try await measureWithCPU {
            for body in bodies {
                var request = HTTPClientRequest(url: base.url.absoluteString)
                request.method = .POST
                request.body = .bytes(ByteBuffer(bytes: body))
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "Content-Encoding", value: "gzip")
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
                guard response.status.code == 200 else { throw BenchError(description: "P3 baseline: \(response.status)") }
            }
        }
        try await client.shutdown()
        guard try base.finish() == total else { throw BenchError(description: "P3 baseline: not every fix arrived") }
        raw.append(tr)
        rawCPU.append(trCPU * 1000 / batches)
    }
    let o = Stats(ours)
    let b = Stats(raw)
    let oc = Stats(oursCPU)
    let bc = Stats(rawCPU)
    let cpu = Comparison(
        id: "P3-cpu", what: "CPU of the bench process per batch of 1,000 during P3's two arms (getrusage, all threads)",
        unit: "ms/batch", ours: oc, baseline: bc, ratio: oc.median / bc.median,
        details: [
            "ours": "the SDK's drain: mark, assembly, read-back, JSON, gzip, commit and its AsyncHTTPClient transport",
            "baseline": "the raw AsyncHTTPClient posting prebuilt bodies (P3's baseline)",
            "sdk_own_cpu_ms_per_batch": String(format: "%.2f", oc.median - bc.median),
            "why": "on a 2-core machine the drain shares the CPU with the server it drains into, so P3's wall ratio follows this figure",
        ])
    return [
        Comparison(
            id: "P3", what: "drain of 100,000 pending fixes at batch 1000 to a local \(ingest == nil ? "receiver" : "beekon-ingest")",
            unit: "s", ours: o, baseline: b, ratio: o.median / b.median,
            details: [
                "requests": "\(total / 1000)", "gzipped_bytes_total": "\(bytes)",
                "receiver": ingest.map { "beekon-ingest (\($0)), SQLite store, a fresh database per drain" }
                    ?? "POSIX HTTP/1.1 on 127.0.0.1, answers 200 at once (beekon-ingest not built)",
                "ours_fixes_per_s": "\(Int(Double(total) / o.median))",
                "baseline": "AsyncHTTPClient (keep-alive) posting the same 100 prebuilt gzipped bodies sequentially",
                "ratio": "ours/baseline in seconds (1.0 = no overhead)",
            ]), cpu,
    ]
}

// MARK: - beekon-ingest

/// Where a drain goes, and how to close it and count the fixes that arrived.
struct Target {
    var url: URL
    var finish: () throws -> Int
}

/// A `beekon-ingest` child process on a free loopback port with its own SQLite file.
final class IngestProcess {
    let port: Int
    private let process: Process

    /// `BEEKON_INGEST_BINARY`, else the Server package's release build next to this package.
    static func binary() -> String? {
        if let path = ProcessInfo.processInfo.environment["BEEKON_INGEST_BINARY"] { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("Server/.build/release/beekon-ingest").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    init(binary: String, database: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--port", "0", "--database", "sqlite:\(database)", "--log-level", "error"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = Data()
        while !seen.contains(UInt8(ascii: "\n")) || !String(decoding: seen, as: UTF8.self).contains("listening on ") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchError(description: "beekon-ingest exited before listening") }
            seen += chunk
        }
        let line = String(decoding: seen, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("listening on ") }!
        guard let port = Int(line.split(separator: ":").last ?? "") else { throw BenchError(description: "beekon-ingest: \(line)") }
        self.port = port
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// Fixes the stopped server stored.
    static func storedFixes(database: String) throws -> Int {
        let queue = try DatabaseQueue(path: database)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM locations") ?? 0 }
    }
}

// MARK: - Receiver

/// A minimal HTTP/1.1 receiver on 127.0.0.1 (POSIX sockets, a thread per connection,
/// keep-alive): reads each request, keeps its body, answers 200 at once.
final class BenchReceiver: @unchecked Sendable {
    let port: Int
    private let listener: LoopbackListener
    private let lock = NSLock()
    private var bodies: [Data] = []

    init() throws {
        do { listener = try LoopbackListener() } catch { throw BenchError(description: error.description) }
        port = listener.port
        listener.start { [self] fd in serve(fd) }
    }

    func reset() { lock.withLock { bodies = [] } }

    func takeBodies() -> [Data] {
        lock.withLock {
            let taken = bodies
            bodies = []
            return taken
        }
    }

    func stop() {
        listener.stop()
    }

    private func serve(_ fd: Int32) {
        var reader = HTTPMessageReader(fd: fd)
        while let head = reader.readHead() {
            var headers: [String: String] = [:]
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            if headers["expect"]?.lowercased() == "100-continue" {
                guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            }
            guard let body = reader.readBody(headers: headers) else { return }
            lock.withLock { bodies.append(Data(body)) }
            guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8))
            else { return }
        }
    }
}
