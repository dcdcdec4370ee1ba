// P2 and P3 (issue 3): upload size and drain throughput of the sync engine.
//
// P2  gzipped upload bytes per fix at batch 1, 10, 100, 1000: real walk fixes stored by the
//     SDK (gate off) and read back, envelopes built like the SDK's SyncEngine builds them
//     (BeekonWire's writer, device linux/0.1.0, no extras) and gzipped like the SDK
//     (zlib deflate level 6, gzip wrapper), versus the same envelope's uncompressed JSON.
//     Samples are the batches (full batches only: 1,856 fixes → 1 batch of 1000).
// P3  drain of 100,000 pending fixes through the real SDK (Beekon actor, db pre-filled
//     with 100,000 pending rows, configure(sync: batchSize 1000) + sync(), URLSession
//     transport) to a local POSIX HTTP receiver that answers 200 at once, versus a raw
//     client posting the same 100 gzipped bodies (captured from the SDK's run) one after
//     the other with URLSession to the same receiver.

import Beekon
import Foundation
import GRDB
import Logging
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
        var gz: [Double] = [], plain: [Double] = []
        for b in 0..<batches {
            let chunk = locations[(b * size)..<((b + 1) * size)]
            let envelope = WireEnvelope(
                batchId: ids.next(), sessionId: chunk.first!.sessionId, sentAt: WireTimestamp(Date()), device: device,
                extras: [:], locations: chunk.map(\.wire), geofenceEvents: [])
            let json = WireJSONWriter.encode(envelope)
            gz.append(Double(try Gzip.compress(json).count) / Double(size))
            plain.append(Double(json.count) / Double(size))
        }
        let o = Stats(gz), p = Stats(plain)
        results.append(Comparison(
            id: "P2/\(size)", what: "gzipped upload bytes per fix at batch \(size)", unit: "B/fix",
            ours: o, baseline: p, ratio: o.median / p.median,
            details: ["batches": "\(batches)", "source": source,
                      "baseline": "the same envelope as uncompressed JSON (BeekonWire writer)"]))
    }
    return results
}

// MARK: - P3

func p3(runs: Int, dir: URL) async throws -> Comparison {
    let total = 100_000
    let receiver = try BenchReceiver()
    defer { receiver.stop() }
    let url = URL(string: "http://127.0.0.1:\(receiver.port)/v1/locations")!
    var ours: [Double] = [], raw: [Double] = []
    var bodies: [Data] = []
    var bytes = 0

    for run in 0...runs { // run 0 warms up (and captures the bodies) and is not counted
        let path = dir.appendingPathComponent("p3-\(run).sqlite").path
        removeDatabase(path)
        // The SDK creates and migrates the file; 100,000 pending rows go in in one transaction.
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: path, provider: ArrayProvider(fixes: []), logger: quietLogger))
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

        receiver.reset()
        let t = try await measure {
            try await beekon.configure(BeekonConfig(sync: SyncConfig(url: url, batchSize: 1000)))
            try await beekon.sync()
        }
        let left = try await beekon.pendingUploadCount()
        let got = receiver.takeBodies()
        guard left == 0, got.count == total / 1000 else {
            throw BenchError(description: "P3: \(left) rows left, \(got.count) requests (status \(beekon.currentSyncStatus))")
        }
        if run == 0 {
            bodies = got
            bytes = got.reduce(0) { $0 + $1.count }
        } else {
            ours.append(Double(total) / t)
        }
        removeDatabase(path)

        // Baseline: the same gzipped bodies, posted one after the other with URLSession.
        let session2 = URLSession(configuration: .ephemeral)
        let tr = try await measure {
            for body in bodies {
                var request = URLRequest(url: url)
                request.httpMethod = "POST"
                request.httpBody = body
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
                let (_, response) = try await session2.data(for: request)
                guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchError(description: "P3 baseline: \(response)") }
            }
        }
        session2.invalidateAndCancel()
        _ = receiver.takeBodies()
        if run > 0 { raw.append(Double(total) / tr) }
    }
    let o = Stats(ours), b = Stats(raw)
    let ratio = o.median / b.median
    let requests = total / 1000
    return Comparison(
        id: "P3", what: "drain of 100,000 pending fixes at batch 1000 to a local receiver", unit: "fixes/s",
        ours: o, baseline: b, ratio: ratio,
        details: ["requests": "\(requests)", "gzipped_bytes_total": "\(bytes)",
                  "receiver": "POSIX HTTP/1.1 on 127.0.0.1, answers 200 at once",
                  "baseline": "URLSession posting the same 100 prebuilt gzipped bodies sequentially",
                  "ratio": "ours/baseline in fixes/s (1.0 = no overhead)"])
}

// MARK: - Receiver

/// A minimal HTTP/1.1 receiver on 127.0.0.1 (POSIX sockets, a thread per connection,
/// keep-alive): reads each request, keeps its body, answers 200 at once.
final class BenchReceiver: @unchecked Sendable {
    let port: Int
    private let listenFD: Int32
    private let lock = NSLock()
    private var bodies: [Data] = []
    private var stopped = false

    init() throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw BenchError(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw BenchError(description: "bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let c = accept(listenFD, nil, nil)
                if c < 0 {
                    if errno == EINTR { continue }
                    return
                }
                var one: Int32 = 1
                setsockopt(c, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                Thread { [self] in serve(c); close(c) }.start()
            }
        }.start()
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
        let first: Bool = lock.withLock {
            let was = stopped
            stopped = true
            return !was
        }
        guard first else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }

    private func serve(_ fd: Int32) {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        func fill() -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        let separator = Data("\r\n\r\n".utf8)
        while true {
            var headEnd = buffer.range(of: separator)
            while headEnd == nil {
                guard fill() else { return }
                headEnd = buffer.range(of: separator)
            }
            let head = String(decoding: buffer[buffer.startIndex..<headEnd!.lowerBound], as: UTF8.self).lowercased()
            buffer.removeSubrange(buffer.startIndex..<headEnd!.upperBound)
            var length = 0
            for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
                length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            if head.contains("expect: 100-continue") { guard write(fd, "HTTP/1.1 100 Continue\r\n\r\n") else { return } }
            while buffer.count < length { guard fill() else { return } }
            let body = Data(buffer.prefix(length))
            buffer.removeSubrange(buffer.startIndex..<buffer.startIndex + length)
            lock.withLock { bodies.append(body) }
            guard write(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}") else { return }
        }
    }

    private func write(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            #else
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, 0) }
            #endif
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}
