import Foundation
import IngestLoopback
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ChaosProxy {
    /// Holds a connection without answering until the client hangs up or `seconds` passed
    /// (`poll(2)` wakes on the hang-up, and on the shutdown `stop()` does).
    static func holdUntilHangUp(_ fd: Int32, seconds: Double) {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, Int32(seconds * 1000))
    }

    /// One exchange with the server; nil when it is unreachable or hangs up.
    static func forward(_ request: HTTPHead, body: [UInt8], port: Int) -> (status: Int, bytes: [UInt8], body: [UInt8])? {
        guard let fd = LoopbackSocket.connect(port: port) else { return nil }
        defer { close(fd) }
        var head = "\(request.method) \(request.path) HTTP/1.1\r\n"
        for (k, v) in request.headers where !["connection", "content-length", "transfer-encoding", "keep-alive", "expect"].contains(k) {
            head += "\(k): \(v)\r\n"
        }
        head += "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        guard LoopbackSocket.sendAll(fd, Array(head.utf8) + body) else { return nil }
        var reader = HTTPMessageReader(fd: fd)
        guard let responseHead = reader.readHead().flatMap(HTTPHead.init), let status = responseHead.status else { return nil }
        let headers = responseHead.headers
        guard let responseBody = reader.readBody(headers: headers) else { return nil }
        var out = "HTTP/1.1 \(status) Relayed\r\ncontent-length: \(responseBody.count)\r\n"
        for k in ["content-type", "retry-after", "www-authenticate"] { if let v = headers[k] { out += "\(k): \(v)\r\n" } }
        out += "\r\n"
        return (status, Array(out.utf8) + responseBody, responseBody)
    }
}
