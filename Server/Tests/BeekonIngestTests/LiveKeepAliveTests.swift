@testable import BeekonIngest
import Foundation
import Testing

extension Ingest {
    /// BY-7, issue 32: the keep-alive comments of the live stream over real sockets, with the
    /// heartbeat ticked by the test (no timer): a stream that carried events since the last
    /// tick gets none at it, an idle stream gets one at every tick, and a stream gets a byte at
    /// least every two ticks. ``ViewerStallRuleTests`` drives the rule itself; this checks that
    /// both ways of serving a stream feed it what they wrote.
    @Suite struct LiveKeepAlive {
        /// A viewer on `server`: the event-driven path (its connection's first request is the
        /// stream) or the Hummingbird route (it asked for `/healthz` first).
        static func open(_ server: TestServer, devices: String, eventDriven: Bool) async throws -> RawHTTPConnection {
            let viewer = try RawHTTPConnection(server.base, timeout: 60)
            let (status, preamble) = await blocking { () -> (Int, String) in
                if !eventDriven {
                    viewer.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                    let health = viewer.readHead() ?? ""
                    _ = viewer.readSizedBody(health)
                }
                viewer.send("GET /v1/live?devices=\(devices) HTTP/1.1\r\nHost: localhost\r\n\r\n")
                let status = viewer.readHead().map(RawHTTPConnection.status) ?? 0
                return (status, viewer.readChunk().map { String(decoding: $0, as: UTF8.self) } ?? "")
            }
            #expect(status == 200)
            #expect(preamble.contains(": beekon live stream"), "\(preamble)")
            return viewer
        }

        /// The chunks a viewer reads until it has seen every one of `kinds` (`event: fix`, …);
        /// a read timeout ends it early.
        static func chunks(_ viewer: RawHTTPConnection, through kinds: Set<String> = ["fix"]) async -> [String] {
            await blocking {
                var chunks: [String] = []
                var missing = kinds
                while !missing.isEmpty, let chunk = viewer.readChunk().map({ String(decoding: $0, as: UTF8.self) }) {
                    chunks.append(chunk)
                    missing = missing.filter { !chunk.contains("event: \($0)\n") }
                }
                return chunks
            }
        }

        static func nextChunk(_ viewer: RawHTTPConnection) async -> String? {
            await blocking { viewer.readChunk().map { String(decoding: $0, as: UTF8.self) } }
        }

        static let keepAlive = LiveStart.keepAlive

        @Test(arguments: [true, false])
        func aStreamThatCarriedEventsSinceTheLastTickGetsNoKeepAliveAtIt(eventDriven: Bool) async throws {
            let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
            try await withServer(.sqlite, liveHeartbeats: ticks) { server, _ in
                let busy = Fixtures.ids.next()
                let idle = Fixtures.ids.next()
                let a = try await Self.open(server, devices: busy.wireString, eventDriven: eventDriven)
                let b = try await Self.open(server, devices: idle.wireString, eventDriven: eventDriven)
                try await ConnectionHardeningTests.waitForMetric(server, "beekon_live_viewers") { $0 == 2 }
                func upload() async throws {
                    #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(1), install: busy)).status == 200)
                }

                // The first upload also publishes the device's first status (a `device` event),
                // which the stream carries too: both are in before the ticks start.
                try await upload()
                let first = await Self.chunks(a, through: ["fix", "device"])
                #expect(first.joined().contains("event: device") && first.joined().contains("event: fix"), "\(first)")
                // Tick 1: the idle stream gets its comment (so the tick reached the streams) ...
                tick.yield()
                #expect(await Self.nextChunk(b) == Self.keepAlive)
                // ... the busy one none: none before the next fix, nor right after it (the fix
                // after that fences it).
                try await upload()
                let second = await Self.chunks(a)
                try await upload()
                let third = await Self.chunks(a)
                #expect(second.last?.contains("event: fix") == true && third.last?.contains("event: fix") == true)
                #expect(!(second + third).contains(Self.keepAlive), "\(second + third)")

                // Ticks 2 and 3 with no events: the busy stream sent events since tick 1, so tick 2
                // gives it nothing and tick 3 a comment; exactly one, which the next fix fences.
                tick.yield()
                #expect(await Self.nextChunk(b) == Self.keepAlive)
                tick.yield()
                #expect(await Self.nextChunk(b) == Self.keepAlive)
                #expect(await Self.nextChunk(a) == Self.keepAlive)
                try await upload()
                let fourth = await Self.chunks(a)
                #expect(fourth.last?.contains("event: fix") == true)
                #expect(!fourth.contains(Self.keepAlive), "one comment for ticks 2 and 3, not two: \(fourth)")
                tick.finish()
            }
        }
    }
}
