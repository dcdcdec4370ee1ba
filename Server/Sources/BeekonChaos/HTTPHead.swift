import Foundation

/// The head of an HTTP/1.1 message: the start line's first two words (a request's method and
/// path, or a response's version and status) and the headers, names lowercased.
package struct HTTPHead: Sendable {
    /// The method.
    package var method: String
    /// The path (with the query).
    package var path: String
    /// The headers, names lowercased.
    package var headers: [String: String] = [:]

    /// Parses a head; nil without a start line.
    package init?(_ head: String) {
        let lines = head.components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ")
        guard first.count >= 2 else { return nil }
        method = String(first[0])
        path = String(first[1])
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }

    /// A response's status code.
    package var status: Int? { Int(path) }

    /// Removes a leading agent label (`/a3/v1/locations` → `/v1/locations`) and returns it.
    package mutating func stripAgentLabel() -> String? {
        let parts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        // "", "a3/v1/locations"
        guard path.hasPrefix("/a"), parts.count == 2 else { return nil }
        let rest = parts[1]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let label = rest[..<slash]
        guard label.count > 1, label.dropFirst().allSatisfy(\.isNumber) else { return nil }
        path = String(rest[slash...])
        return String(label)
    }
}
