import Foundation
import IngestLoopback
#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to a test server for the tests that need the bytes themselves:
/// pipelined requests, garbage, a viewer that stops reading (a small receive buffer, set
/// before connecting), the chunked SSE body read chunk by chunk. Its reads block: call them
/// through ``blocking(_:)``, off the cooperative pool the in-process server needs.
/// Used from one task at a time (hence unchecked).
final class RawHTTPConnection: @unchecked Sendable {
    let fd: Int32
    private var reader: HTTPMessageReader

    /// Connects to the server at `base` (`http://127.0.0.1:PORT`); reads give up after `timeout`
    /// seconds. The default only bounds a failure: in-process servers share the cooperative pool
    /// with every other test, and CPU-heavy tests have held it for 20 s on a 2-core machine.
    /// `source` connects from another loopback address (`127.0.0.2`: another client).
    init(_ base: String, receiveBuffer: Int32? = nil, timeout: Int = 90, source: String? = nil) throws {
        guard let port = base.split(separator: ":").last.flatMap({ UInt16($0) }) else { throw TestFailure("no port in \(base)") }
        guard let fd = LoopbackSocket.connect(port: Int(port), receiveTimeout: timeout, receiveBuffer: receiveBuffer, source: source) else {
            throw TestFailure("cannot connect to \(base)")
        }
        self.fd = fd
        reader = HTTPMessageReader(fd: fd)
    }

    deinit { close(fd) }

    /// Sends the text as it is (no SIGPIPE).
    func send(_ text: String) { LoopbackSocket.sendAll(fd, Array(text.utf8)) }

    /// The status line and headers of the next response; nil at EOF.
    func readHead() -> String? { reader.readHead() }

    /// The status code of a head.
    static func status(_ head: String) -> Int { Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0 }

    /// A body of `content-length` bytes (for the answers of /healthz and refusals).
    func readSizedBody(_ head: String) -> [UInt8]? {
        let line = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
        let count = line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        return reader.read(count: count)
    }

    /// The payload of the next chunk of a chunked body; nil at EOF, on the last chunk or a read timeout.
    func readChunk() -> [UInt8]? { reader.readChunk() }

    /// Whether the server closed the connection: reads what is left until EOF (true) or a timeout (false).
    func readsToEOF() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}

/// SSE frames from the raw chunks of a live stream: the event `id:` and the fix id of every `event: fix`.
struct FixIDScanner: Sendable {
    private var pending = ""
    /// The event ids seen so far, in order.
    private(set) var ids: [Int64] = []
    /// The fixes' own ids (`data`'s `id`), in order.
    private(set) var fixIDs: [String] = []

    /// Adds a chunk's bytes (frames may span chunks).
    mutating func add(_ bytes: [UInt8]) {
        pending += String(decoding: bytes, as: UTF8.self)
        while let end = pending.range(of: "\n\n") {
            let frame = pending[..<end.lowerBound]
            pending.removeSubrange(..<end.upperBound)
            let lines = frame.split(separator: "\n")
            guard lines.contains("event: fix"), let id = lines.first(where: { $0.hasPrefix("id: ") }) else { continue }
            if let n = Int64(id.dropFirst(4)) { ids.append(n) }
            if let data = lines.first(where: { $0.hasPrefix("data: ") }),
                let object = try? JSONSerialization.jsonObject(with: Data(data.dropFirst(6).utf8)) as? [String: Any],
                let fix = object["id"] as? String
            {
                fixIDs.append(fix)
            }
        }
    }
}

/// Runs blocking work (a socket read, a child process's pipes, a browser's DevTools pipe, a
/// start-up poll) on a thread of its own, off Swift's cooperative pool: in-process servers need
/// its threads while a test waits, and two such waits on a 2-core machine are the whole pool.
/// Not on `DispatchQueue.global()`: on Linux that queue is as wide as the machine has cores.
/// Throws what `work` throws (nothing for a non-throwing closure).
func blocking<T: Sendable, E: Error>(_ work: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: Result { () throws(E) -> T in try work() }) }.start()
    }
    return try result.get()
}
