/// One Server-Sent Events message.
public struct SSEMessage: Sendable, Equatable {
    /// The `event:` field (`message` when absent).
    public var event: String
    /// The `data:` lines joined with newlines.
    public var data: String
    /// The `id:` field, if the message had one.
    public var id: String?

    /// Creates a message.
    public init(event: String = "message", data: String, id: String? = nil) {
        self.event = event
        self.data = data
        self.id = id
    }
}

/// An incremental `text/event-stream` parser (the WHATWG rules that matter here):
/// lines end with LF, CRLF or CR; a blank line dispatches; `:` starts a comment;
/// `retry:` with digits sets the reconnection time. Feed bytes as they arrive.
public struct SSEParser: Sendable {
    private var line: [UInt8] = []
    private var lastWasCR = false
    private var event = ""
    private var data: [String] = []
    private var id: String?
    private var hasData = false
    /// The last `retry:` value in milliseconds, if the server sent one.
    public private(set) var retryMillis: Int?
    /// Number of comment lines seen (heartbeats).
    public private(set) var comments = 0

    /// Creates an empty parser.
    public init() {}

    /// Consumes bytes; returns the messages they completed.
    public mutating func feed<S: Sequence>(_ bytes: S) -> [SSEMessage] where S.Element == UInt8 {
        var out: [SSEMessage] = []
        for b in bytes {
            if b == 0x0A, lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = b == 0x0D
            if b == 0x0A || b == 0x0D {
                if let m = endLine() { out.append(m) }
            } else {
                line.append(b)
            }
        }
        return out
    }

    private mutating func endLine() -> SSEMessage? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer {
                event = ""
                data = []
                id = nil
                hasData = false
            }
            guard hasData else { return nil }
            return SSEMessage(event: event.isEmpty ? "message" : event, data: data.joined(separator: "\n"), id: id)
        }
        if line[0] == 0x3A {
            comments += 1
            return nil
        }
        let colon = line.firstIndex(of: 0x3A)
        let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        let text = String(decoding: value, as: UTF8.self)
        switch field {
        case "event": event = text
        case "data":
            data.append(text)
            hasData = true
        case "id" where !text.contains("\0"): id = text
        case "retry": if let n = Int(text), n >= 0 { retryMillis = n }
        default: break
        }
        return nil
    }
}
