import BeekonWire
import Foundation

/// The `/v1/live` answer as a viewer reads it off a raw socket: the status line and headers,
/// a chunked body (`Transfer-Encoding: chunked`) or a plain one, and in it the server-sent
/// events, read by BeekonWire's `SSEParser` (one SSE parser for the SDK, the agent and the chaos run).
struct EventStreamParser {
    /// One event with an id.
    struct Event {
        /// Its id (the stream's position).
        var id: Int
        /// `fix`, `reset`, …
        var kind: String
        /// Its data.
        var data: String
        /// The `id` of a fix event's data.
        var fixID: String? {
            (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    /// The stream answered something else than 200, or its chunked framing is broken.
    struct Refused: Error {}

    private var head: [UInt8] = []
    private var inHead = true
    private var chunked: ChunkedBody?
    private var events = SSEParser()

    /// Consumes bytes; the events they completed.
    mutating func feed(_ bytes: ArraySlice<UInt8>) throws -> [Event] {
        var body = bytes
        if inHead {
            head += bytes
            guard let end = head.firstRange(of: [13, 10, 13, 10]) else { return [] }
            let text = String(decoding: head[..<end.lowerBound], as: UTF8.self)
            let status = text.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            guard status == 200 else { throw Refused() }
            let isChunked = text.lowercased().split(separator: "\r\n").contains {
                $0.hasPrefix("transfer-encoding:") && $0.contains("chunked")
            }
            chunked = isChunked ? ChunkedBody() : nil
            body = head[end.upperBound...]
            head = []
            inHead = false
        }
        let payload: [UInt8]
        if chunked != nil {
            guard let decoded = chunked?.feed(body) else { throw Refused() }
            payload = decoded
        } else {
            payload = Array(body)
        }
        return events.feed(payload).compactMap { message in
            message.id.flatMap { Int($0) }.map { Event(id: $0, kind: message.event, data: message.data) }
        }
    }
}

/// An incremental decoder of HTTP/1.1 chunked transfer coding (RFC 9112 §7.1): the chunk data
/// of the bytes fed so far; nil when the framing is broken. Chunk extensions and trailers are skipped.
struct ChunkedBody {
    private enum State {
        case size
        case data(Int)
        case dataEnd, trailer, done
    }

    private var state = State.size
    private var line: [UInt8] = []

    /// Consumes bytes; the chunk data among them, or nil on a framing error.
    mutating func feed(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var rest = bytes
        while !rest.isEmpty {
            switch state {
            case .data(let left):
                let take = rest.prefix(left)
                out += take
                rest = rest.dropFirst(take.count)
                state = left == take.count ? .dataEnd : .data(left - take.count)
            case .size, .dataEnd, .trailer:
                guard let newline = rest.firstIndex(of: 10) else {
                    line += rest
                    rest = []
                    continue
                }
                line += rest[..<newline]
                rest = rest[(newline + 1)...]
                if line.last == 13 { line.removeLast() }
                defer { line = [] }
                guard nextState(afterLine: line) else { return nil }
            case .done:
                rest = []
            }
        }
        return out
    }

    /// Moves on after one line (CRLF removed); false when the line breaks the framing.
    private mutating func nextState(afterLine line: [UInt8]) -> Bool {
        switch state {
        case .size:
            let digits = line.prefix { $0 != 0x3B }  // ";" starts a chunk extension
            guard let size = Int(String(decoding: digits, as: UTF8.self).trimmingCharacters(in: .whitespaces), radix: 16),
                size >= 0
            else { return false }
            state = size == 0 ? .trailer : .data(size)
        case .dataEnd:
            guard line.isEmpty else { return false }
            state = .size
        case .trailer:
            if line.isEmpty { state = .done }
        case .data, .done:
            break
        }
        return true
    }
}
