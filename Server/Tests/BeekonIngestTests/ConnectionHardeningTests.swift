import BeekonChaos
@testable import BeekonIngest
import BeekonPrimitives
import BeekonWire
import Foundation
import IngestLoopback
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 28, finding 1 and 5, written as the attacks: descriptor exhaustion by slow and idle
/// connections, header trickling, idle keep-alive connections, and work held for clients that
/// left (IN-3: the server stays up and answers; IN-7: health; BY-1/BY-2: streams, command channel).
@Suite("Connection hardening", .serialized)
struct ConnectionHardeningTests {
    /// The acceptance test: a `beekon-ingest` under `ulimit -n 256` held by 400 connections
    /// (half trickle header bytes after a request line, half send nothing) still answers
    /// every probe during the attack (200, or 503 when every slot is taken: never silence),
    /// answers `/healthz` and a good upload once the attack stops (2 s asked; see below), and never dies.
    /// Before the fix the probe got no answer (the accept loop was out of descriptors) and
    /// the process could crash.
    @Test func descriptorExhaustionDoesNotTakeTheServerDown() async throws {
        let dir = try ChaosDir()
        // The attack needs 400 sockets here: make room under this process's own limit.
        _ = ConnectionLimit.raiseDescriptorLimit()
        let server = try await ServerProcess.start(database: dir.path("ingest.sqlite"), dir: dir, descriptorLimit: 256)
        defer { server.terminate() }
        let port = server.port
        let attackers: [Int32] = await blocking {
            (0..<400).compactMap { i in
                guard let fd = LoopbackSocket.connect(port: port, receiveTimeout: 5) else { return nil }
                if i % 2 == 0 { _ = LoopbackSocket.sendAll(fd, Array("POST /v1/locations HTTP/1.1\r\nHost: localhost\r\n".utf8)) }
                return fd
            }
        }
        #expect(attackers.count == 400, "the attack itself could open only \(attackers.count) connections")
        var duringAttack: [Int] = []
        for round in 0..<6 {
            // One header byte per trickling connection per round: each stays "in progress".
            await blocking {
                for (i, fd) in attackers.enumerated() where i % 2 == 0 { _ = LoopbackSocket.sendAll(fd, Array("X".utf8)) }
            }
            // 20 s: a bound on silence, not a latency target (under a CPU hog a debug server's answer can take seconds).
            if round % 2 == 1 { duringAttack.append(await Self.probe(port, timeout: 20)) }
            try await Task.sleep(for: .milliseconds(300))  // the attack's own pace, not a synchronisation
        }
        #expect(server.child.isRunning, "the server died under the attack: \(server.output.suffix(2_000))")
        #expect(
            duringAttack.allSatisfy { $0 == 200 || $0 == 503 },
            "every probe during the attack is answered (200, or 503 at the cap), not left hanging: \(duringAttack)")
        for fd in attackers { close(fd) }
        // The server learns of the 400 closes as it reads them: probe until answered 200. The
        // issue asks for 2 s, met when this suite runs alone (about 0.1 s) and measured by the
        // benchmark's S row, where timings belong. Here the bound only catches a server that
        // never recovers: 120 s, because beside the other suites with a CPU hog on one of two
        // cores the debug server still answered 503 at a 10 s bound (issue 31's hog runs).
        let stopped = ContinuousClock.now
        var health = 0
        var upload = 0
        while ContinuousClock.now - stopped < .seconds(120), health != 200 || upload != 200 {
            if health != 200 { health = await Self.probe(port, timeout: 2) }
            if health == 200 { upload = await Self.probe(port, timeout: 2, upload: true) }
            if health != 200 || upload != 200 { try await Task.sleep(for: .milliseconds(20)) }  // the probe's pace
        }
        print("descriptor exhaustion: /healthz and an upload answered 200 \(ContinuousClock.now - stopped) after the attack stopped")
        #expect(health == 200, "/healthz after the attack: \(health)")
        #expect(upload == 200, "an upload after the attack: \(upload)")
        #expect(server.child.isRunning, "the server died: \(server.output.suffix(2_000))")
        let metrics = try await HTTP.send("GET", server.base + "/metrics").text
        #expect(metrics.contains("beekon_connections_max 192"), "the cap derived from 256 descriptors")
    }

    /// A connection that sent its request line and then trickles header bytes is closed when
    /// the first-request timeout (2 s here) passes, although bytes keep coming. Before the fix
    /// only the request line was timed: the trickle held the connection for good.
    @Test func headerTricklingIsCutByTheHeadTimeout() async throws {
        try await withServer(.sqlite, configure: { $0.firstRequestTimeoutSeconds = 2 }) { server, _ in
            let slow = try RawHTTPConnection(server.base, timeout: 1)
            let closed: Bool = await blocking {
                // The window starts when this thread does: a loaded pool may start it late.
                let started = ContinuousClock.now
                slow.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
                // A header byte every ~second (the read timeout paces it) for up to 240 s: the
                // window only bounds a failure (without the head timeout the trickle is held for
                // good). At the suite's start under a CPU hog the 2 s cut was seen after 44 s,
                // and twice not within 50 s, while ~150 tests start their servers at once.
                while ContinuousClock.now - started < .seconds(240) {
                    var byte: UInt8 = 0
                    let n = recv(slow.fd, &byte, 1, 0)
                    if n == 0 { return true }
                    if n < 0, errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { return true }  // reset: closed
                    slow.send("X")
                }
                return false
            }
            #expect(closed, "a header-trickling connection is closed by the head timeout")
        }
    }

    /// An idle keep-alive connection is closed after the idle timeout (2 s here); before the
    /// fix it was held forever (`idleTimeout: nil`).
    @Test func idleKeepAliveConnectionIsClosed() async throws {
        try await withServer(.sqlite, configure: { $0.idleTimeoutSeconds = 2 }) { server, _ in
            let idle = try RawHTTPConnection(server.base, timeout: 90)
            let (status, closed): (Int, Bool) = await blocking {
                idle.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                let head = idle.readHead() ?? ""
                _ = idle.readSizedBody(head)
                return (RawHTTPConnection.status(head), idle.readsToEOF())
            }
            #expect(status == 200)
            #expect(closed, "the idle keep-alive connection is closed within 90 s (a bound on failure: the timeout is 2 s)")
        }
    }

    /// Issue 50: a request that does not ask to keep its connection (HTTP/1.0 without
    /// `Connection: keep-alive`, or `Connection: Close` in any case) ends the connection with its
    /// answer. The connection stayed open for the idle timeout, and the next request on it got
    /// 400. An HTTP/1.0 request that asks for keep-alive keeps it. The reads give up after 10 s
    /// (a bound on failure; the idle timeout is 600 s).
    @Test func requestsWithoutKeepAliveCloseAfterTheAnswer() async throws {
        try await withServer(.sqlite, configure: { $0.idleTimeoutSeconds = 600 }) { server, _ in
            for request in [
                "GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: Close\r\n\r\n",
                "GET /v1/devices HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n",
            ] {
                let connection = try RawHTTPConnection(server.base, timeout: 10)
                let (statuses, closed): ([Int], Bool) = await blocking {
                    connection.send(request)
                    var statuses: [Int] = []
                    for _ in 0..<request.components(separatedBy: "GET ").count - 1 {
                        let head = connection.readHead() ?? ""
                        _ = connection.readSizedBody(head)
                        statuses.append(RawHTTPConnection.status(head))
                    }
                    return (statuses, connection.readsToEOF())
                }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(request.debugDescription): \(statuses)")
                #expect(closed, "\(request.debugDescription): the connection is closed after the answer")
            }
            let kept = try RawHTTPConnection(server.base, timeout: 10)
            let statuses: [Int] = await blocking {
                (0..<2).map { _ in
                    kept.send("GET /healthz HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n")
                    let head = kept.readHead() ?? ""
                    _ = kept.readSizedBody(head)
                    return RawHTTPConnection.status(head)
                }
            }
            #expect(statuses == [200, 200], "HTTP/1.0 with keep-alive: \(statuses)")
        }
    }

    /// BY-2: a device that hangs up on `/commands?wait=60` ends the long poll at once (its hub
    /// subscription, counted in `beekon_live_viewers`, goes), and a locate request created
    /// afterwards is not marked delivered to the connection that left. Before the fix the
    /// poll ran for its full 60 s.
    @Test func longPollEndsWhenTheDeviceHangsUp() async throws {
        try await withServer(.sqlite, configure: { $0.locateIntervalSeconds = 0 }) { server, _ in
            let install = UUID().uuidString.lowercased()
            let poller = try RawHTTPConnection(server.base)
            poller.send("GET /v1/devices/\(install)/commands?wait=60 HTTP/1.1\r\nHost: localhost\r\n\r\n")
            try await Self.waitForMetric(server, "beekon_live_viewers") { $0 == 1 }
            shutdown(poller.fd, Int32(SHUT_RDWR))
            try await Self.waitForMetric(server, "beekon_live_viewers", within: .seconds(30)) { $0 == 0 }
        }
    }

    /// BY-1: viewers that hang up are let go at once, not at the next heartbeat (60 s here),
    /// on both paths: the event-driven stream (first request `GET /v1/live`) and the route (a
    /// keep-alive connection whose first request was something else).
    @Test func streamsEndWhenTheViewerHangsUp() async throws {
        try await withServer(.sqlite, configure: { $0.liveHeartbeatSeconds = 60 }) { server, _ in
            let eventDriven = try RawHTTPConnection(server.base)
            let onRoute = try RawHTTPConnection(server.base)
            let opened: [Int] = await blocking {
                eventDriven.send("GET /v1/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
                onRoute.send("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
                let health = onRoute.readHead() ?? ""
                _ = onRoute.readSizedBody(health)
                onRoute.send("GET /v1/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return [eventDriven.readHead(), onRoute.readHead()].map { $0.map(RawHTTPConnection.status) ?? 0 }
            }
            #expect(opened == [200, 200])
            try await Self.waitForMetric(server, "beekon_live_viewers") { $0 == 2 }
            shutdown(eventDriven.fd, Int32(SHUT_RDWR))
            shutdown(onRoute.fd, Int32(SHUT_RDWR))
            try await Self.waitForMetric(server, "beekon_live_viewers", within: .seconds(30)) { $0 == 0 }
        }
    }

    /// BY-7, finding 5: an idle share viewer costs no work per re-check tick. The hub checks each
    /// share with open streams once per tick (2 checks for 1,000 viewers on 2 shares) and wakes
    /// only the viewers of a share that ended; before, every tick woke every share viewer, and
    /// each ran a check of its own (2,000 viewers took 56 % of a core).
    @Test func shareRechecksAreOnePerShareAndWakeOnlyItsViewers() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-hub-\(UUID().uuidString).sqlite").path
        defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
        let store = try SQLiteLocationStore(path: path, logger: testLogger)
        let revoked = Locked(Set<String>())
        let checks = Locked(0)
        let hub = LiveHub(
            store: store, logger: testLogger,
            shareIsActive: { id in
                checks.withLock { $0 += 1 }
                return !revoked.value.contains(id)
            })
        let wakes = Locked([String: Int]())
        for i in 0..<1_000 {
            let share = i % 2 == 0 ? "sh_a" : "sh_b"
            _ = hub.subscribe(share: share, wake: { wakes.withLock { $0[share, default: 0] += 1 } }, finish: {})
        }
        _ = hub.subscribe(share: nil, wake: { wakes.withLock { $0["admin", default: 0] += 1 } }, finish: {})
        await hub.recheckShares()
        #expect(wakes.value.isEmpty, "a tick on live shares wakes nobody")
        #expect(checks.value == 2, "one check per share, not per viewer")
        revoked.value = ["sh_b"]
        await hub.recheckShares()
        #expect(wakes.value == ["sh_b": 500], "only the revoked share's viewers are woken")
    }

    /// Polls a `/metrics` value until `holds` (bounded by `within`); records the last value on overrun.
    /// `headers` go with each request (an admin key when the server requires auth).
    static func waitForMetric(
        _ server: some TestTransport, _ name: String, within: Duration = .seconds(60), headers: [String: String] = [:],
        _ holds: (Int) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + within
        var value = try await Self.metric(server, name, headers: headers)
        while !holds(value), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))  // polling the server's gauge, bounded by the deadline
            value = try await Self.metric(server, name, headers: headers)
        }
        #expect(holds(value), "\(name) is \(value) after \(within)")
    }

    /// A value of the server's `/metrics`; -1 when absent.
    static func metric(_ server: some TestTransport, _ name: String, headers: [String: String] = [:]) async throws -> Int {
        let text = try await server.send("GET", "/metrics", headers: headers).text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
    }

    /// The status of `GET /healthz` (or a one-fix upload) on a fresh connection; 0 when no
    /// answer came within `timeout` seconds.
    static func probe(_ port: Int, timeout: Int, upload: Bool = false) async -> Int {
        let body = upload ? [UInt8](WireJSONWriter.encode(Fixtures.envelope(Fixtures.locations(1)))) : []
        return await blocking {
            guard let connection = try? RawHTTPConnection("http://127.0.0.1:\(port)", timeout: timeout) else { return 0 }
            if upload {
                connection.send(
                    "POST /v1/locations HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.count)\r\n\r\n" + String(decoding: body, as: UTF8.self))
            } else {
                connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            }
            return connection.readHead().map(RawHTTPConnection.status) ?? 0
        }
    }
}
