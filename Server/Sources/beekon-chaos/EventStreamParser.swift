import Foundation

/// The `/v1/live` answer as a viewer reads it: the status line, then server-sent events
/// (`id`, `event`, `data` lines, a blank line after each), chunked framing skipped.
struct EventStreamParser {
    /// One event with an id.
    struct Event {
        /// Its id (the stream's position).
        var id: Int
        /// `fix`, `reset`, …
        var kind: String
        /// Its data line.
        var data: String
        /// The `id` of a fix event's data.
        var fixID: String? {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    /// The stream answered something else than 200.
    struct Refused: Error {}

    private var buffer: [UInt8] = []
    private var inHead = true
    private var fields: [String: String] = [:]

    /// Consumes bytes; the events they completed.
    mutating func feed(_ bytes: ArraySlice<UInt8>) throws -> [Event] {
        buffer += bytes
        if inHead {
            guard let end = buffer.firstRange(of: [13, 10, 13, 10]) else { return [] }
            let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
            let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            guard status == 200 else { throw Refused() }
            buffer.removeSubrange(..<end.upperBound)
            inHead = false
        }
        var events: [Event] = []
        while let newline = buffer.firstIndex(of: 10) {
            let raw = buffer[..<newline]
            buffer.removeSubrange(...newline)
            if raw.last == 13 { continue }  // chunked framing, never part of an SSE line
            let line = String(decoding: raw, as: UTF8.self)
            if line.isEmpty {
                if let id = fields["id"].flatMap({ Int($0) }) {
                    events.append(Event(id: id, kind: fields["event"] ?? "", data: fields["data"] ?? ""))
                }
                fields = [:]
            } else if !line.hasPrefix(":"), let separator = line.range(of: ": ") {
                fields[String(line[..<separator.lowerBound])] = String(line[separator.upperBound...])
            }
        }
        return events
    }
}
