import Beekon
import BeekonHTTPClient
import BeekonTestSupport
import Foundation
import Testing

/// The agent's keep-alive transport against the POSIX `FaultyReceiver` on
/// loopback: connections are reused, a lost answer is a retryable error the transport
/// never re-sends itself (SY-6), a stuck server is cut at the deadline (SY-11), and
/// redirects come back as they are.
@Suite("AsyncHTTPClient transport: keep-alive, lost answers, deadline, redirects", .serialized)
struct AsyncHTTPClientTransportTests {
    static func post(_ receiver: FaultyReceiver, _ n: Int, timeout: Duration = .seconds(30)) -> HTTPRequest {
        HTTPRequest(
            url: URL(string: receiver.url)!, headers: ["Content-Type": "application/json", "X-Seq": "\(n)"],
            body: Data(#"{"n":\#(n)}"#.utf8), timeout: timeout)
    }

    @Test func requestsShareOneKeptAliveConnection() async throws {
        let receiver = try FaultyReceiver()
        defer { receiver.stop() }
        let transport = try AsyncHTTPClientTransport()
        for n in 0..<5 {
            let response = try await transport.send(Self.post(receiver, n))
            #expect(response.status == 200)
            #expect(response.body == Data("{}".utf8))
        }
        await transport.shutdown()
        #expect(receiver.received.map { $0.headers["x-seq"] } == ["0", "1", "2", "3", "4"])
        #expect(receiver.connections == 1, "5 requests over \(receiver.connections) connections")
    }

    /// SY-6, SY-11: the server reads the second request on the reused connection, stores it
    /// and closes without answering. The transport reports that at once as a network error
    /// (retryable), not a timeout, and does not send the request again itself; the next
    /// request goes out on a fresh connection.
    @Test func anAnswerLostOnAReusedConnectionIsARetryableErrorNeverResent() async throws {
        let receiver = try FaultyReceiver(script: [.ok, .storeThenDrop], freshConnectionBeforeDrop: false)
        defer { receiver.stop() }
        let transport = try AsyncHTTPClientTransport()
        #expect(try await transport.send(Self.post(receiver, 0)).status == 200)
        await #expect(throws: HTTPTransportError.network("connection closed before the answer")) {
            _ = try await transport.send(Self.post(receiver, 1))
        }
        #expect(receiver.connections == 1, "the lost answer was on the kept-alive connection")
        #expect(try await transport.send(Self.post(receiver, 2)).status == 200)
        await transport.shutdown()
        #expect(
            receiver.received.map { $0.headers["x-seq"] } == ["0", "1", "2"],
            "each request exactly once:\n\(receiver.log)")
        #expect(receiver.connections == 2)
    }

    /// SY-11: a server that reads the request and never answers is cut at the deadline.
    @Test func aStuckServerIsCutAtTheDeadline() async throws {
        let receiver = try FaultyReceiver(script: [.hold])
        defer { receiver.stop() }
        let transport = try AsyncHTTPClientTransport()
        // The receiver scripts requests in arrival order: the held one must be request 0 before
        // it is released (a starved machine could otherwise time it out before it arrived, and
        // request 1 would then be the held one).
        let stuck = Task { try await transport.send(Self.post(receiver, 0, timeout: .seconds(3))) }
        try await receiver.waitFor("the held request") { $0.count == 1 }
        await #expect(throws: HTTPTransportError.timeout) { _ = try await stuck.value }
        receiver.releaseHeld()
        #expect(try await transport.send(Self.post(receiver, 1)).status == 200)
        await transport.shutdown()
        #expect(receiver.received.count == 2)
    }

    @Test func aRedirectIsReturnedNotFollowed() async throws {
        let receiver = try FaultyReceiver(script: [.status(307, headers: ["Location": "/elsewhere"])])
        defer { receiver.stop() }
        let transport = try AsyncHTTPClientTransport()
        let response = try await transport.send(Self.post(receiver, 0))
        await transport.shutdown()
        #expect(response.status == 307)
        #expect(response.headers["location"] == "/elsewhere")
        #expect(receiver.received.count == 1)
    }

    @Test func aRefusedConnectionIsANetworkError() async throws {
        let receiver = try FaultyReceiver()
        let url = receiver.url
        receiver.stop()
        let transport = try AsyncHTTPClientTransport()
        let request = HTTPRequest(url: URL(string: url)!, body: Data("{}".utf8), timeout: .seconds(10))
        do {
            _ = try await transport.send(request)
            Issue.record("a closed port answered")
        } catch {
            guard case .network(let why) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(why == "cannot connect to 127.0.0.1: connection refused", "\(why)")
        }
        await transport.shutdown()
    }

    @Test func anUnusableCertificateFileIsAOneLineConfigurationError() throws {
        let tmp = TempDir()
        let notPEM = try tmp.write("ca.pem", "not a certificate")
        for (path, why) in [("/nonexistent/ca.pem", "cannot read the file"), (notPEM, "not a PEM certificate file")] {
            #expect(throws: BeekonError.invalidConfiguration("sync.trustedCertificates: \(path): \(why)")) {
                _ = try AsyncHTTPClientTransport(trustedCertificatePaths: [path])
            }
        }
    }
}
