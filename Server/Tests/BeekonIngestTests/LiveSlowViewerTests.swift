import BeekonIngest
import BeekonSources
import BeekonWire
import Foundation
import Logging
import Testing

extension Ingest {
    /// The slow-viewer rule of the event-driven stream (BY-7, BY-8): a viewer whose socket is
    /// not writable is paused at its cursor (the server buffers at most a page past the
    /// channel's high-water mark), resumes from the store once it drains even when the ring
    /// moved on, and is closed when it stays unwritable for two heartbeats.
    @Suite struct LiveSlowViewers {
        /// 3,000 fixes with a 100-event ring while the viewer does not read: once it reads, it gets
        /// every fix, in commit order, none twice.
        @Test func pausedViewerCatchesUpFromTheStore() async throws {
            try await withServer(.sqlite, configure: Self.smallBuffers(ring: 100, heartbeat: 120)) { server, _ in
                let viewer = try await Self.unreadViewer(server)
                let uploaded = try await Self.upload(server, batches: 6)
                let total = uploaded.count
                let got: FixIDScanner = await blocking {
                    var scanner = FixIDScanner()
                    while scanner.fixIDs.count < total, let chunk = viewer.readChunk() { scanner.add(chunk) }
                    return scanner
                }
                #expect(got.fixIDs == uploaded)
                #expect(zip(got.ids, got.ids.dropFirst()).allSatisfy { $0 < $1 })
            }
        }

        /// A viewer that stops reading is closed after two heartbeats unwritable (counted in
        /// `/metrics`); resuming from the last event it got yields exactly the rest. The test
        /// waits for the server's own announcement of the cut (its "live viewer closed" log
        /// line, logged after the counter moved), not for a `/metrics` poll on real time: while
        /// its socket buffer is full the test cannot see the close, and reading the socket would
        /// make the channel writable and cancel the stall.
        @Test func stalledViewerIsClosedAndResumesWithoutLoss() async throws {
            let cuts = StallSignal()
            try await withServer(.sqlite, configure: Self.smallBuffers(ring: 20_000, heartbeat: 0.1), logger: cuts.logger) { server, _ in
                let viewer = try await Self.unreadViewer(server)
                let uploaded = try await Self.upload(server, batches: 6)
                // Generous: a loaded 2-core box; the cut itself takes two 0.1 s heartbeats.
                let cut = try await cuts.first(within: .seconds(120))
                #expect(cut.hasPrefix("the viewer stopped reading"))
                #expect(try await Self.metric(server, "beekon_live_viewers_stalled_total") == 1)
                let before: FixIDScanner = await blocking {
                    var scanner = FixIDScanner()
                    while let chunk = viewer.readChunk() { scanner.add(chunk) }
                    return scanner
                }
                #expect(before.fixIDs.count < uploaded.count)
                #expect(Array(uploaded.prefix(before.fixIDs.count)) == before.fixIDs)
                let rest = try await Live.fixes(
                    server.base + "/v1/live", after: String(before.ids.last ?? 0), count: uploaded.count - before.fixIDs.count)
                #expect(before.fixIDs + rest.compactMap(Live.fixID) == uploaded)
            }
        }

        /// A server whose live connections have a 4 KiB send buffer, so that a viewer that does
        /// not read makes its channel unwritable after a few hundred events.
        static func smallBuffers(ring: Int, heartbeat: Double) -> (inout IngestConfiguration) -> Void {
            { config in
                config.liveRingCapacity = ring
                config.liveHeartbeatSeconds = heartbeat
                config.liveSendBufferBytes = 4_096
            }
        }

        /// An open stream (from the head) on a socket with a 4 KiB receive buffer that the test does not read yet.
        static func unreadViewer(_ server: TestServer) async throws -> RawHTTPConnection {
            let viewer = try RawHTTPConnection(server.base, receiveBuffer: 4_096, timeout: 90)
            let opened = await blocking {
                viewer.send("GET /v1/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return viewer.readHead().map(RawHTTPConnection.status)
            }
            guard opened == 200 else { throw TestFailure("the stream answered \(opened ?? 0)") }
            return viewer
        }

        /// Uploads `batches` batches of 500 fixes; their ids in commit order.
        static func upload(_ server: TestServer, batches: Int) async throws -> [String] {
            var uploaded: [String] = []
            for _ in 0..<batches {
                let e = Fixtures.envelope(Fixtures.locations(500))
                #expect(try await HTTP.upload(server, e).status == 200)
                uploaded += e.locations.map { $0.id.wireString }
            }
            return uploaded
        }

        /// The reasons the server gives when it closes a live viewer for not reading, as they
        /// are logged (an event the test awaits; every other log line is dropped).
        final class StallSignal: Sendable {
            private let reasons: AsyncStream<String>
            private let sink: AsyncStream<String>.Continuation

            init() { (reasons, sink) = AsyncStream.makeStream(of: String.self) }

            /// A logger for the server under test that feeds this signal.
            var logger: Logger {
                var l = Logger(label: "beekon-ingest-test") { [sink] _ in Handler(sink: sink) }
                l.logLevel = .info
                return l
            }

            /// The first stall cut's reason; a failure if none comes within `limit` (a deadline,
            /// not a synchronisation: the cut itself ends the wait).
            func first(within limit: Duration) async throws -> String {
                try await withThrowingTaskGroup(of: String?.self) { group in
                    group.addTask { [reasons] in
                        for await reason in reasons { return reason }
                        return nil
                    }
                    group.addTask {
                        try? await Task.sleep(for: limit)
                        return nil
                    }
                    defer { group.cancelAll() }
                    guard let first = try await group.next(), let reason = first else {
                        throw TestFailure("the stalled viewer was not cut within \(limit)")
                    }
                    return reason
                }
            }

            struct Handler: LogHandler {
                let sink: AsyncStream<String>.Continuation
                var metadata: Logger.Metadata = [:]
                var logLevel: Logger.Level = .info
                subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                    get { metadata[key] }
                    set { metadata[key] = newValue }
                }
                func log(event: LogEvent) {
                    guard event.message == "live viewer closed", let reason = event.metadata?["reason"].map({ "\($0)" }),
                        reason.contains("stopped reading")
                    else { return }
                    sink.yield(reason)
                }
            }
        }

        /// A counter or gauge from `/metrics`.
        static func metric(_ server: TestServer, _ name: String) async throws -> Int {
            let text = try await HTTP.send("GET", server.base + "/metrics").text
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }
    }
}
