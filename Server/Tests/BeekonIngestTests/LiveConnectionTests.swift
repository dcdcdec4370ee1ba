import BeekonIngest
import BeekonSources
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Connections over real sockets with the first-request sniffer in front: what is not the
    /// live stream stays Hummingbird's, byte for byte (BY-7; issue 14's idle-viewer design).
    @Suite struct LiveConnections {
        static let get = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"

        /// A keep-alive connection whose first request is not the stream stays on Hummingbird;
        /// `GET /v1/live` later on the same connection is served by the Hummingbird route.
        @Test func keepAliveThenLiveOnTheHummingbirdRoute() async throws {
            try await withServer(.sqlite) { server, _ in
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(2))).status == 200)
                let connection = try RawHTTPConnection(server.base)
                let ids: [Int64] = await blocking {
                    connection.send(Self.get)
                    guard let head = connection.readHead(), RawHTTPConnection.status(head) == 200,
                        connection.readSizedBody(head) != nil
                    else { return [] }
                    connection.send("GET /v1/live HTTP/1.1\r\nHost: localhost\r\nLast-Event-ID: 0\r\n\r\n")
                    guard let live = connection.readHead(), RawHTTPConnection.status(live) == 200,
                        live.lowercased().contains("content-type: text/event-stream")
                    else { return [] }
                    var scanner = FixIDScanner()
                    while scanner.ids.count < 2, let chunk = connection.readChunk() { scanner.add(chunk) }
                    return scanner.ids
                }
                #expect(ids.count == 2)
            }
        }

        /// Two requests in one write (pipelined) before the route is chosen: both are answered, in order.
        @Test func pipelinedRequestsAreAllAnswered() async throws {
            try await withServer(.sqlite) { server, _ in
                let connection = try RawHTTPConnection(server.base)
                let statuses: [Int] = await blocking {
                    connection.send(Self.get + "GET /nowhere HTTP/1.1\r\nHost: localhost\r\n\r\n" + Self.get)
                    var statuses: [Int] = []
                    for _ in 0..<3 {
                        guard let head = connection.readHead(), connection.readSizedBody(head) != nil else { break }
                        statuses.append(RawHTTPConnection.status(head))
                    }
                    return statuses
                }
                #expect(statuses == [200, 404, 200])
            }
        }

        /// Garbage and an endless request line get 400 (Hummingbird's, the sniffer's), headers
        /// too large on the live path get 400 (NIO's); the server goes on serving.
        @Test func garbageAndOversizedHeadsGet400() async throws {
            try await withServer(.sqlite) { server, _ in
                let garbage = try RawHTTPConnection(server.base)
                let long = try RawHTTPConnection(server.base)
                let fat = try RawHTTPConnection(server.base)
                let answers: [Int] = await blocking {
                    garbage.send("\u{1}\u{2}\u{3} nonsense\r\n\r\n")
                    long.send("GET /" + String(repeating: "a", count: 10_000))
                    fat.send("GET /v1/live HTTP/1.1\r\nX-Big: " + String(repeating: "b", count: 100_000) + "\r\n\r\n")
                    return [garbage, long, fat].map { connection in
                        // -1: closed (EOF or reset) with no answer read; 0: still open at the read timeout.
                        guard let head = connection.readHead() else { return connection.readsToEOF() ? -1 : 0 }
                        return RawHTTPConnection.status(head) * (connection.readsToEOF() ? 1 : -1)
                    }
                }
                #expect(Array(answers.prefix(2)) == [400, 400])
                // The fat head: the sniffer hands the first 64 KiB to the live pipeline, whose decoder
                // refuses it at 80 KiB with 400 and closes while the rest of the 100 KB is still unread
                // in the server's socket; the kernel then resets the connection, and the client may
                // see the reset before it reads the 400 (seen in 2 of 4 runs on a loaded machine). Either
                // way the connection is refused and closed, never held.
                #expect(answers[2] == 400 || answers[2] == -1, "\(answers)")
                #expect(try await HTTP.send("GET", server.base + "/healthz").status == 200)
            }
        }

        /// A connection that never sends a request line is closed after the first-request timeout
        /// (3 s here). The read gives up after 25 s: under the default of 30 s, so a server that
        /// ignored the setting fails, and far above 3 s, so a loaded machine does not. (At 0.2 s
        /// a loaded CI machine reset the `/healthz` probe's own connection before its request.)
        @Test func silentConnectionIsClosed() async throws {
            try await withServer(.sqlite, configure: { $0.firstRequestTimeoutSeconds = 3 }) { server, _ in
                #expect(try await HTTP.send("GET", server.base + "/healthz").status == 200)  // accepting connections
                let silent = try RawHTTPConnection(server.base, timeout: 90)
                #expect(await blocking { silent.readsToEOF() })
            }
        }

        /// BY-7 on the event-driven path: a refused stream is answered like the route (device filter
        /// 400, JSON error body) and the connection is closed; an admitted one streams from the cursor.
        @Test func eventDrivenStreamAnswersAndStreams() async throws {
            try await withServer(.sqlite) { server, _ in
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(3))).status == 200)
                let bad = try RawHTTPConnection(server.base)
                let good = try RawHTTPConnection(server.base)
                let (refusal, ids): (String, [Int64]) = await blocking {
                    bad.send("GET /v1/live?devices=nope HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    let head = bad.readHead() ?? ""
                    let body = bad.readSizedBody(head).map { String(decoding: $0, as: UTF8.self) } ?? ""
                    good.send("GET /v1/live?last_event_id=0 HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    guard let live = good.readHead(), RawHTTPConnection.status(live) == 200 else { return (head + body, []) }
                    var scanner = FixIDScanner()
                    while scanner.ids.count < 3, let chunk = good.readChunk() { scanner.add(chunk) }
                    return (head + "\n" + body, scanner.ids)
                }
                #expect(refusal.hasPrefix("HTTP/1.1 400"))
                #expect(refusal.contains("\"error\""))
                #expect(ids.count == 3 && ids == ids.sorted())
            }
        }

        /// BY-7: once a stream is open its request decoder is gone (an idle viewer's memory,
        /// issue 32); what the viewer sends afterwards — a pipelined request, bytes that are not
        /// HTTP — is dropped unanswered, and the stream goes on delivering from its cursor.
        @Test func inputAfterTheStreamsRequestIsDropped() async throws {
            try await withServer(.sqlite) { server, _ in
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(2))).status == 200)
                let viewer = try RawHTTPConnection(server.base)
                let first: [Int64] = await blocking {
                    viewer.send("GET /v1/live?last_event_id=0 HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    guard let live = viewer.readHead(), RawHTTPConnection.status(live) == 200 else { return [] }
                    var scanner = FixIDScanner()
                    while scanner.ids.count < 2, let chunk = viewer.readChunk() { scanner.add(chunk) }
                    viewer.send(Self.get + "\u{1}\u{2}\u{3} nonsense\r\n\r\n" + String(repeating: "x", count: 5_000))
                    return scanner.ids
                }
                #expect(first.count == 2)
                #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1))).status == 200)
                let next: (ids: [Int64], text: String) = await blocking {
                    var scanner = FixIDScanner()
                    var text = ""
                    while scanner.ids.count < 1, let chunk = viewer.readChunk() {
                        scanner.add(chunk)
                        text += String(decoding: chunk, as: UTF8.self)
                    }
                    return (scanner.ids, text)
                }
                #expect(next.ids.count == 1 && next.ids.allSatisfy { $0 > (first.max() ?? 0) })
                #expect(!next.text.contains("HTTP/1.1"), "the pipelined request was not answered inside the stream")
            }
        }
    }
}
