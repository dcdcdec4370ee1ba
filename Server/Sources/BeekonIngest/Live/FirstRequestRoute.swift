/// Where a connection goes, decided from the request line of its first request: the
/// event-driven live stream (``LiveViewerHandler``) for `GET /v1/live`, Hummingbird for
/// everything else. The route is decided from the request line (at most ``maxLineBytes``
/// bytes); the chosen pipeline parses the head itself. ``headIsComplete(_:)`` tells the
/// sniffer when the whole head is in, so that one deadline covers all of it.
enum FirstRequestRoute: Equatable, Sendable {
    /// Not enough bytes yet to see the end of the request line.
    case needMore
    /// `GET /v1/live` (with or without a query): the event-driven stream.
    case live
    /// Anything else, garbage included (Hummingbird answers 400 to what it cannot parse).
    case hummingbird
    /// No line end within ``maxLineBytes``: refused with 400 and closed.
    case tooLong

    /// The longest request line looked at.
    static let maxLineBytes = 8_192

    /// How much of a head the sniffer holds back waiting for its end; a longer head is handed
    /// to the chosen pipeline, whose decoder refuses it (its limit is 80 KiB).
    static let maxHeadBytes = 65_536

    /// Whether `bytes` (a connection's first bytes) hold the end of the first request's head:
    /// a request line that is not HTTP/1.x (garbage, answered 400 by the pipeline at once), a
    /// blank line after the headers, or more than ``maxHeadBytes``.
    static func headIsComplete(_ bytes: some Collection<UInt8>) -> Bool {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return false }
        if !isHTTP(line: bytes[bytes.startIndex..<newline]) || bytes.count > maxHeadBytes { return true }
        var previous: UInt8 = 0
        var lineLength = 0
        for byte in bytes[newline...] {
            if byte == UInt8(ascii: "\n") {
                if lineLength == 0 && previous != 0 { return true }
                lineLength = 0
            } else if byte != UInt8(ascii: "\r") {
                lineLength += 1
            }
            previous = byte
        }
        return false
    }

    /// Whether a request line has three parts and ends in `HTTP/1.1` or `HTTP/1.0`.
    static func isHTTP(line: some Collection<UInt8>) -> Bool {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return false }
        var version = Array(parts[2])
        if version.last == UInt8(ascii: "\r") { version.removeLast() }
        return version == Array("HTTP/1.1".utf8) || version == Array("HTTP/1.0".utf8)
    }

    /// The route for the first bytes of a connection.
    static func classify(_ bytes: some Collection<UInt8>) -> FirstRequestRoute {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            return bytes.count > maxLineBytes ? .tooLong : .needMore
        }
        if bytes.distance(from: bytes.startIndex, to: newline) > maxLineBytes { return .tooLong }
        return isLive(line: bytes[bytes.startIndex..<newline]) ? .live : .hummingbird
    }

    /// Whether a request line is `GET /v1/live[?…] HTTP/1.x`.
    static func isLive(line: some Collection<UInt8>) -> Bool {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, Array(parts[0]) == Array("GET".utf8) else { return false }
        var version = Array(parts[2])
        if version.last == UInt8(ascii: "\r") { version.removeLast() }
        guard version == Array("HTTP/1.1".utf8) || version == Array("HTTP/1.0".utf8) else { return false }
        let target = Array(parts[1])
        let path = Array("/v1/live".utf8)
        guard target.starts(with: path) else { return false }
        return target.count == path.count || target[path.count] == UInt8(ascii: "?")
    }
}
