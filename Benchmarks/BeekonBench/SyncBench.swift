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
//     .build/release/beekon-ingest) both go to a POSIX receiver answering 200 at once.
//     BEEKON_INGEST_CPUS (a `taskset -c` list) pins each server; scripts/bench.sh runs P3 a
//     second time with the server on CPU 0 and this process (both client arms) on CPU 1.
// P3-cpu the bench process's CPU per batch in the SDK's drain, versus the same work done
//     directly (issue 31), measured in the same run on a database filled the same way: one
//     SELECT of the next 1,000 pending rows, the same JSON writer, gzip at the same level,
//     one UPDATE marking them sent, commit (synchronous NORMAL, as the SDK's mark) — no network.

import BeekonGzip
import BeekonLoopback
import BeekonPrimitives
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
    // BEEKON_BENCH_P3_FIXES: another size (a multiple of 1,000), e.g. for a debug build's same-run comparison.
    let total = ProcessInfo.processInfo.environment["BEEKON_BENCH_P3_FIXES"].flatMap(Int.init) ?? size(100_000, tiny: 3_000)
    let batches = Double(total / 1000)
    let capture = try BenchReceiver()
    defer { capture.stop() }
    let ingest = IngestProcess.binary()
    var ours: [Double] = []
    var raw: [Double] = []
    var oursCPU: [Double] = []
    var rawCPU: [Double] = []
    var sameCPU: [Double] = []
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
        try await fillPending(path, total: total)
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

        sameCPU.append(try await sameWork(dir.appendingPathComponent("p3-same-\(run).sqlite").path, total: total) * 1000 / batches)
    }
    let o = Stats(ours)
    let b = Stats(raw)
    let oc = Stats(oursCPU)
    let bc = Stats(rawCPU)
    let sc = Stats(sameCPU)
    let cpu = Comparison(
        id: "P3-cpu", what: "CPU of the bench process per batch of 1,000: the SDK's drain vs the same work done directly (getrusage)",
        unit: "ms/batch", ours: oc, baseline: sc, ratio: oc.median / sc.median,
        details: [
            "ours": "the SDK's drain: assembly, read-back, JSON, gzip, mark, commits and its AsyncHTTPClient transport",
            "baseline": "same work, no network: one SELECT of 1,000 pending rows, BeekonWire's writer, gzip level 6, one UPDATE, commit",
            "raw_post_cpu_ms_per_batch": String(format: "%.2f (%.2f–%.2f)", bc.median, bc.min, bc.max),
            "ratio_vs_same_work_plus_raw_post": String(format: "%.2f", oc.median / (sc.median + bc.median)),
            "target": "≤ 1.5× (issue 31)",
            "why": "on a 2-core machine the drain shares the CPU with the server it drains into, so P3's wall ratio follows this figure",
        ])
    return [
        Comparison(
            id: "P3", what: "drain of \(total) pending fixes at batch 1000 to a local \(ingest == nil ? "receiver" : "beekon-ingest")",
            unit: "s", ours: o, baseline: b, ratio: o.median / b.median,
            details: [
                "requests": "\(total / 1000)", "gzipped_bytes_total": "\(bytes)",
                "receiver": ingest.map { "beekon-ingest (\($0)), SQLite store, a fresh database per drain" }
                    ?? "POSIX HTTP/1.1 on 127.0.0.1, answers 200 at once (beekon-ingest not built)",
                "ours_fixes_per_s": "\(Int(Double(total) / o.median))",
                "baseline": "AsyncHTTPClient (keep-alive) posting the same \(total / 1000) prebuilt gzipped bodies sequentially",
                "ratio": "ours/baseline in seconds (1.0 = no overhead)",
            ]), cpu,
    ]
}

/// Fills the SDK database at `path` (created and migrated by the SDK) with `total` pending
/// fixes of one session in one transaction.
func fillPending(_ path: String, total: Int) async throws {
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
}

/// P3-cpu's baseline: the work a drain must do for `total` pending fixes, done directly on a
/// database the SDK created and `fillPending` filled. Per batch of 1,000: one SELECT of the
/// next pending rows, the rows into BeekonWire's envelope and writer, gzip at the SDK's level,
/// one UPDATE marking them sent, commit (`synchronous = NORMAL`, as the SDK's mark). Returns
/// the CPU seconds of the loop (this process, all threads).
func sameWork(_ path: String, total: Int) async throws -> Double {
    removeDatabase(path)
    defer { removeDatabase(path) }
    let sdk = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: []), logger: quietLogger))
    _ = try await sdk.storeReport()
    await sdk.shutdown()
    try await fillPending(path, total: total)
    let pool = try rawPool(path)
    defer { try? pool.close() }
    try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
    let ids = UUIDv7Generator()
    let device = WireDevice(installId: ids.next(), platform: "linux", sdkVersion: BeekonVersion.current, model: nil)
    var sent = 0
    var bytes = 0
    let (_, cpu) = try await measureWithCPU {
        var after: Int64 = 0
        while true {
            let from = after
            let rows = try pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT rowid, id, session_id, ts, latitude, longitude, accuracy, speed, bearing, altitude, trigger, motion,
                               is_mock, activity, quality
                        FROM location WHERE rowid > ? AND upload_state = 0 ORDER BY rowid LIMIT 1000
                        """, arguments: [from])
            }
            guard let last = rows.last else { break }
            let locations = rows.map { row -> WireLocation in
                WireLocation(
                    id: UUID(wire: row[1]) ?? UUID(uuid: UUID_NULL), timestamp: WireTimestamp(millis: row[3]),
                    trigger: Trigger(rawValue: row[10]) ?? .interval, motion: Motion(rawValue: row[11]) ?? .unknown, isMock: row[12],
                    latitude: row[4], longitude: row[5], accuracy: row[6], speed: row[7], bearing: row[8], altitude: row[9],
                    activity: (row[13] as String?).flatMap(Activity.init(rawValue:)),
                    quality: (row[14] as String?).flatMap(Quality.init(rawValue:)))
            }
            let envelope = WireEnvelope(
                batchId: ids.next(), sessionId: UUID(wire: rows[0][2]) ?? UUID(uuid: UUID_NULL), sentAt: WireTimestamp(Date()),
                device: device, extras: [:], locations: locations, geofenceEvents: [])
            bytes += Gzip.compress(WireJSONWriter.encode(envelope))?.count ?? 0
            let (lo, hi): (Int64, Int64) = (rows[0][0], last[0])
            try await pool.write { db in
                try db.execute(
                    sql: "UPDATE location SET upload_state = 1 WHERE rowid BETWEEN ? AND ? AND upload_state = 0", arguments: [lo, hi])
            }
            sent += rows.count
            after = hi
        }
    }
    guard sent == total, bytes > 0 else { throw BenchError(description: "P3 same-work baseline: \(sent) of \(total) rows") }
    return cpu
}

private let UUID_NULL: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

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

    /// `BEEKON_INGEST_BINARY`, else the Server package's release build in this package's `.build`
    /// (where `scripts/bench.sh` builds it).
    static func binary() -> String? {
        if let path = ProcessInfo.processInfo.environment["BEEKON_INGEST_BINARY"] { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent(".build/release/beekon-ingest").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    init(binary: String, database: String) throws {
        process = Process()
        let arguments = ["--port", "0", "--database", "sqlite:\(database)", "--log-level", "error"]
        if let cpus = ProcessInfo.processInfo.environment["BEEKON_INGEST_CPUS"] {
            // The server on its own CPUs (scripts/bench.sh's pinned P3), whatever this process's affinity.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", cpus, binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
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
final class BenchReceiver: Sendable {
    let port: Int
    private let listener: LoopbackListener
    private let bodies = Locked<[Data]>([])

    init() throws {
        do { listener = try LoopbackListener() } catch { throw BenchError(description: error.description) }
        port = listener.port
        listener.start { [self] fd in serve(fd) }
    }

    func reset() { bodies.value = [] }

    func takeBodies() -> [Data] {
        bodies.withLock { bodies in
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
            bodies.withLock { $0.append(Data(body)) }
            guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}".utf8))
            else { return }
        }
    }
}
