import BeekonGzip
import BeekonLoopback
@testable import Beekon
import BeekonPrimitives
import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

/// Uploads inside the host's execution budget (BY-10, SY-4, SY-5): when the budget runs
/// out mid-upload the request is cancelled, the rows are kept and the next attempt carries
/// the same `batch_id`. Real HTTP over loopback (URLSessionTransport), an injected clock
/// and a scripted budget.
@Suite("Upload within the execution budget")
struct UploadBudgetTests {
    @Test func budgetExpiryMidUploadCancelsTheRequestAndTheNextAttemptSendsTheSameBatch() async throws {
        let server = try StallingServer()
        let dir = TempDir()
        let clock = TestClock()
        let provider = ScriptedProvider()
        let budget = ScriptedBudget(nil)
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, transport: URLSessionTransport(),
                randomUnit: { 0 }, executionBudget: budget))
        try await beekon.configure(
            BeekonConfig(
                minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0,
                sync: SyncConfig(url: URL(string: "http://127.0.0.1:\(server.port)/ingest")!)))
        try await beekon.start()
        await feed(beekon, provider, [fix(0), fix(1, north: 10), fix(2, north: 20)], expecting: 3)
        #expect(try await beekon.pendingUploadCount() == 3)

        // In the background with 10 s left: the request may run 5 s (the safety margin is 5 s).
        budget.set(.seconds(10))
        let sleepers = clock.sleeperCount
        let firstSync = Task { try await beekon.sync() }
        let firstBatch = try #require(await server.nextRequest())  // the server holds it unanswered
        await clock.waitForSleepers(sleepers + 1)  // the budget's timer
        clock.advance(by: .seconds(5))
        let outcome = try await firstSync.value
        #expect(await server.waitUntilClientClosed())  // the request was cancelled
        #expect(outcome.uploadedLocations == 0)
        if case .transient(let why)? = outcome.failure {
            #expect(why.contains("background time ran out"))
        } else {
            Issue.record("the outcome names no budget failure: \(outcome)")
        }
        #expect(try await beekon.pendingUploadCount() == 3)  // rows kept
        #expect(beekon.currentSyncStatus == .idle)

        budget.set(nil)  // back in the foreground
        try await beekon.sync()  // next attempt
        let secondBatch = try #require(await server.nextRequest())
        #expect(secondBatch.batchId == firstBatch.batchId)
        #expect(secondBatch.locations.map(\.id) == firstBatch.locations.map(\.id))
        #expect(try await beekon.pendingUploadCount() == 0)
        #expect(budget.counts.begun >= 2)
        #expect(budget.counts.begun == budget.counts.ended)
        try await beekon.stop()
    }

    @Test func noTimeLeftMeansNoRequestAndNothingLost() async throws {
        let dir = TempDir()
        let clock = TestClock()
        let provider = ScriptedProvider()
        let transport = ScriptedTransport()
        let budget = ScriptedBudget(.seconds(3))  // under the 5 s safety margin
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, transport: transport,
                randomUnit: { 0 }, executionBudget: budget))
        try await beekon.start()
        await feed(beekon, provider, [fix(0)], expecting: 1)
        try await beekon.configure(BeekonConfig(sync: SyncConfig(url: URL(string: "http://127.0.0.1:9/ingest")!)))
        try await beekon.sync()
        #expect(await transport.requests.isEmpty)
        #expect(try await beekon.pendingUploadCount() == 1)
        budget.set(nil)
        try await beekon.sync()
        #expect(await transport.requests.count == 1)
        #expect(try await beekon.pendingUploadCount() == 0)
    }

    @Test func theWindowKeepsASafetyMargin() {
        let window = ExecutionWindow()
        #expect(window.allowance(remaining: nil) == nil)
        #expect(window.allowance(remaining: .seconds(30)) == .seconds(25))
        #expect(window.allowance(remaining: .seconds(4)) == .zero)
        #expect(BackgroundTime.remaining(seconds: .greatestFiniteMagnitude) == nil)  // foreground
        #expect(BackgroundTime.remaining(seconds: 179.5) == .milliseconds(179_500))
        #expect(BackgroundTime.remaining(seconds: -1) == .zero)
    }

    @Test func backgroundRefreshIsAskedForNoSoonerThanIOSHonoursIt() {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        #expect(BackgroundRefreshPlan(syncIntervalSeconds: nil).nextRequest(now: now) == nil)
        #expect(BackgroundRefreshPlan(syncIntervalSeconds: 300).nextRequest(now: now) == now.addingTimeInterval(900))
        #expect(BackgroundRefreshPlan(syncIntervalSeconds: 3600).nextRequest(now: now) == now.addingTimeInterval(3600))
    }
}

/// A loopback HTTP server: the first request is read and never answered (until the client
/// gives up and closes), later ones are answered 200. Each request's envelope is reported.
final class StallingServer: @unchecked Sendable {
    let port: Int
    private let listener: LoopbackListener
    private let requests: AsyncStream<WireEnvelope>
    private let closed: AsyncStream<Void>

    init() throws {
        let listener = try LoopbackListener()
        self.listener = listener
        self.port = listener.port
        let (requests, gotRequest) = AsyncStream.makeStream(of: WireEnvelope.self)
        let (closed, gotClose) = AsyncStream.makeStream(of: Void.self)
        self.requests = requests
        self.closed = closed
        let first = Locked(true)
        listener.start { conn in
            var reader = HTTPMessageReader(fd: conn)
            guard let head = reader.readHead() else { return }
            var headers: [String: String] = [:]
            for line in head.split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
            }
            if let body = reader.readBody(headers: headers),
                let json = try? Gzip.decompress(Data(body)), let envelope = try? WireEnvelope.decode(json)
            {
                gotRequest.yield(envelope)
            }
            let isFirst = first.withLock { first in
                defer { first = false }
                return first
            }
            if isFirst {
                var byte: UInt8 = 0
                while read(conn, &byte, 1) > 0 {}  // until the client closes (cancellation)
                gotClose.yield()
            } else {
                _ = LoopbackSocket.sendAll(conn, Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            }
        }
    }

    deinit {
        listener.stop()  // the accept loop closes the socket
    }

    /// The next request's envelope.
    func nextRequest() async -> WireEnvelope? {
        for await envelope in requests { return envelope }
        return nil
    }

    /// Whether the client closed the stalled connection.
    func waitUntilClientClosed() async -> Bool {
        for await _ in closed { return true }
        return false
    }
}
