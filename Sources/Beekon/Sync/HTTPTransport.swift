import Foundation

/// One HTTP request as the sync engine and the token refresher send it.
public struct HTTPRequest: Sendable, Hashable {
    /// Target URL, used verbatim.
    public var url: URL
    /// HTTP method.
    public var method: String
    /// Header fields in order.
    public var headers: [String: String]
    /// Request body.
    public var body: Data
    /// Hard deadline for the whole exchange.
    public var timeout: Duration

    /// Creates a request.
    public init(url: URL, method: String = "POST", headers: [String: String] = [:], body: Data = Data(), timeout: Duration = .seconds(30)) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// The answer to an `HTTPRequest`. Header names are lowercased.
public struct HTTPResponse: Sendable, Hashable {
    /// Status code (redirects are returned as-is, never followed).
    public var status: Int
    /// Header fields with lowercased names.
    public var headers: [String: String]
    /// Response body.
    public var body: Data

    /// Creates a response; header names are lowercased.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }
}

/// Why an exchange produced no HTTP status.
public enum HTTPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The deadline passed before a complete answer arrived.
    case timeout
    /// Connection refused, reset, DNS failure, TLS failure, …
    case network(String)

    public var description: String {
        switch self {
        case .timeout: return "request timed out"
        case .network(let why): return "network error: \(why)"
        }
    }
}

/// The seam between the SDK and the network: one request in, one response (or
/// failure) out. The live one is `URLSessionTransport`; tests script answers.
public protocol HTTPTransport: Sendable {
    /// Performs one exchange within `request.timeout`; never follows redirects.
    func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse
}
