import BeekonChaos
import Foundation
import IngestLoopback
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's read API as the harness checks it: one `GET` per call over loopback with
/// the admin key (`Connection: close`), JSON answers.
enum ReadAPI {
    /// A failed call.
    struct Failure: Error, CustomStringConvertible {
        /// What failed.
        var description: String
    }

    /// The fix ids of a device, every page.
    static func fixIDs(port: Int, install: String) throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        for _ in 0..<10_000 {
            var path = "/v1/devices/\(install)/fixes?limit=5000"
            if let cursor { path += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor) }
            let page = try get(port: port, path: path) as? [String: Any] ?? [:]
            ids += (page["fixes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            cursor = page["next_cursor"] as? String
            if cursor == nil { break }
        }
        return ids
    }

    /// The geofence event count the server holds over every session of a device.
    static func geofenceEventCount(port: Int, install: String) throws -> Int {
        let body = try get(port: port, path: "/v1/devices/\(install)/sessions")
        let sessions = (body as? [String: Any])?["sessions"] as? [[String: Any]] ?? body as? [[String: Any]] ?? []
        return sessions.reduce(0) { $0 + ($1["geofence_event_count"] as? Int ?? 0) }
    }

    /// One `GET`; the JSON it answered with 200.
    static func get(port: Int, path: String) throws -> Any {
        guard let fd = LoopbackSocket.connect(port: port, receiveTimeout: 60) else { throw Failure(description: "GET \(path): refused") }
        defer { close(fd) }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ChaosOptions.apiKey)\r\nConnection: close\r\n\r\n"
        guard LoopbackSocket.sendAll(fd, Array(request.utf8)) else { throw Failure(description: "GET \(path): send failed") }
        var reader = HTTPMessageReader(fd: fd)
        guard let head = reader.readHead().flatMap(HTTPHead.init) else { throw Failure(description: "GET \(path): no answer") }
        let status = head.status
        guard let body = reader.readBody(headers: head.headers), status == 200,
            let json = try? JSONSerialization.jsonObject(with: Data(body))
        else { throw Failure(description: "GET \(path): \(status ?? 0)") }
        return json
    }
}
