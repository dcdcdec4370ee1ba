import AsyncHTTPClient
import BeekonGzip
import BeekonPrimitives
import NIOCore
import NIOHTTP1
@testable import BeekonIngest
import BeekonWire
import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresTestCluster
import Logging
import ServiceLifecycle
import Testing
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The root suite: one PostgreSQL cluster for every nested suite.
@Suite(.postgresCluster) struct Ingest {}

/// The storage backends every store/API test runs against.
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    static var all: [Backend] { PostgresCluster.skipped ? [.sqlite] : [.sqlite, .postgres] }
    var testDescription: String { rawValue }

    /// A fresh, empty database of this kind.
    /// A new database: a path for SQLite, `createdb` on the suite's cluster for PostgreSQL
    /// (run off the cooperative pool: dozens of tests create databases at once, and each
    /// `createdb` waited for on a pool thread stalled every in-process server for seconds).
    func freshDatabase() async throws -> TestDatabase {
        switch self {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-\(UUID().uuidString).sqlite").path
            return TestDatabase(location: .sqlite(path: path), cluster: nil, name: path)
        case .postgres:
            guard let cluster = PostgresClusterTrait.current else {
                throw PostgresCluster.Failure.missingBinaries("(no cluster in scope: the suite needs .postgresCluster)")
            }
            let name = try await blocking { try cluster.createDatabase() }
            return TestDatabase(location: try DatabaseLocation(parsing: cluster.url(name)), cluster: cluster, name: name)
        }
    }
}

/// One test's database.
struct TestDatabase: Sendable {
    let location: DatabaseLocation
    let cluster: PostgresCluster?
    let name: String

    /// The file of a SQLite database (a test that opens the store itself); throws for PostgreSQL.
    var sqlitePath: String {
        get throws {
            guard case .sqlite(let path) = location else { throw TestFailure("not SQLite: \(location)") }
            return path
        }
    }

    func remove() {
        if cluster == nil {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: name + suffix) }
        }
    }
}

/// How long test stores wait for PostgreSQL before answering 503. The suites run side by
/// side on a loaded 2-core CI machine (a burst of 30 overlapping ingests once waited out the
/// 10 s default there); the 503 path itself is tested with its own short deadline.
let testDatabaseTimeout = 60

let testLogger: Logger = {
    var l = Logger(label: "beekon-ingest-test")
    l.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
    return l
}()

/// The last lines of swift-service-lifecycle (its messages that name a service), kept beside
/// a logger that goes on writing as before: what a hung graceful shutdown is diagnosed from.
final class LifecycleTrail: Sendable {
    private let storage = Locked<[String]>([])
    static let kept = 60

    /// The lines kept, oldest first.
    var lines: [String] { storage.value }

    /// `base` (its handler and level for everything else) plus this trail at debug.
    func logger(over base: Logger) -> Logger {
        var l = Logger(label: base.label) { _ in MultiplexLogHandler([Handler(trail: self), Filtered(base: base)]) }
        l.logLevel = .debug
        return l
    }

    struct Handler: LogHandler {
        let trail: LifecycleTrail
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let meta = (event.metadata ?? [:]).merging(metadata) { a, _ in a }
            guard meta.keys.contains(where: { $0.hasPrefix("sl-") }) || event.source == "ServiceLifecycle" else { return }
            let line =
                "\(event.level) \(event.message) \(meta.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
            trail.storage.withLock { lines in
                lines.append(line)
                if lines.count > LifecycleTrail.kept { lines.removeFirst(lines.count - LifecycleTrail.kept) }
            }
        }
    }

    /// Passes on to `base` only what `base`'s own level let through when the trail was made.
    /// Its level does not follow the multiplexed logger's (set to debug for the trail): the
    /// console stays as quiet as `base` was.
    struct Filtered: LogHandler {
        var base: Logger
        var metadata: Logger.Metadata {
            get { base.handler.metadata }
            set { base.handler.metadata = newValue }
        }
        var logLevel: Logger.Level {
            get { threshold }
            set {}  // fixed: see above
        }
        let threshold: Logger.Level
        init(base: Logger) {
            self.base = base
            threshold = base.logLevel
        }
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { base[metadataKey: key] }
            set { base[metadataKey: key] = newValue }
        }
        func log(event: LogEvent) {
            guard event.level >= threshold else { return }
            base.handler.log(event: event)
        }
    }
}

/// The lines a logger wrote (`LEVEL message`, then its metadata when there is any), for tests that promise a log line.
final class LogCapture: Sendable {
    private let storage = Locked<[String]>([])

    /// Every line so far.
    var lines: [String] { storage.value }

    /// A logger writing here, every level.
    var logger: Logger {
        var l = Logger(label: "beekon-ingest-test") { _ in Handler(capture: self) }
        l.logLevel = .trace
        return l
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let details = (event.metadata ?? [:]).isEmpty ? "" : " \(event.metadata ?? [:])"
            capture.storage.withLock { $0.append("\(event.level) \(event.message)\(details)") }
        }
    }
}

/// A server on 127.0.0.1 with a port picked by the OS, run in its own ServiceGroup.
final class TestServer: TestTransport {
    let base: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// The service lifecycle's last lines (which service started, was asked to stop, finished):
    /// shown when a stop overruns, so that a hung shutdown names the service that hung.
    let lifecycle: LifecycleTrail

    private init(base: String, group: ServiceGroup, task: Task<Void, any Error>, lifecycle: LifecycleTrail) {
        self.base = base
        self.group = group
        self.task = task
        self.lifecycle = lifecycle
    }

    /// Starts a server; `liveHeartbeats` ticks its live streams' heartbeat (nil: its timer).
    static func start(
        _ config: IngestConfiguration, store: (any LocationStore)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, liveHeartbeats: AsyncStream<Void>? = nil, logger: Logger = testLogger
    ) async throws -> TestServer {
        var config = config
        config.port = 0
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let onListening: @Sendable (String, Int) async -> Void = { _, port in continuation.yield(port) }
        let lifecycle = LifecycleTrail()
        // The default logger also keeps the service lifecycle's lines (swift-service-lifecycle logs
        // them at debug, from the application's own group too); a caller's logger is left as given.
        let logger = logger.label == testLogger.label && logger.logLevel == testLogger.logLevel ? lifecycle.logger(over: logger) : logger
        let app: any Service
        if let store {
            app = IngestServer.buildApplication(
                config, store: store, logger: logger, now: now, liveHeartbeats: liveHeartbeats, onListening: onListening)
        } else {
            app = try IngestServer.buildApplication(
                config, logger: logger, now: now, liveHeartbeats: liveHeartbeats, onListening: onListening)
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: lifecycle.logger(over: testLogger)))
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        for await port in ports {
            return TestServer(base: "http://127.0.0.1:\(port)", group: group, task: task, lifecycle: lifecycle)
        }
        try await task.value
        throw TestFailure("the server stopped before listening")
    }

    /// Graceful shutdown; waits until the server has stopped, at most `limit`. A server still
    /// running then is a failed test with its name, not a test run that waits forever (a CI run
    /// once sat idle, no socket open and no thread busy, on a wait that nothing would end). The
    /// default is generous: whole-suite runs with a CPU hog on one core saw stops overrun 60 s.
    func stop(limit: Duration = .seconds(120)) async throws {
        await group.triggerGracefulShutdown()
        let task = self.task
        struct Overrun: Error {}
        do {
            try await OperationTimeout.run(limit, onExpiry: { Overrun() }) { try await task.value }
        } catch is Overrun {
            Issue.record(
                """
                the in-process server at \(base) did not stop within \(limit) of its graceful shutdown; its service lifecycle:
                \(lifecycle.lines.joined(separator: "\n"))
                """)
            task.cancel()
        }
    }
}

/// A throwaway SQLite store (auth off) with its configuration and token service, for tests that
/// build routes without a server; the file goes when `body` returns.
func withScratchStore<T>(
    _ body: (IngestConfiguration, SQLiteLocationStore, TokenService) throws -> T
) throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-scratch-\(UUID().uuidString).sqlite").path
    defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
    let store = try SQLiteLocationStore(path: path, logger: testLogger)
    let tokens = TokenService(store: store.tokens, accessTTLSeconds: 900, refreshTTLSeconds: 86_400)
    return try body(IngestConfiguration(database: .sqlite(path: path), authMode: .off), store, tokens)
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A response as the test sees it.
struct HTTPResult: Sendable {
    let status: Int
    let body: [UInt8]
    let headers: [String: String]
    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> [String: Any] {
        guard let o = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestFailure("not a JSON object: \(text)")
        }
        return o
    }
}

/// Real HTTP over loopback with URLSession (FoundationNetworking on Linux), the SDK's transport too.
enum HTTP {
    /// AsyncHTTPClient rather than URLSession: FoundationNetworking's session on Linux can
    /// wedge for good (its requests and their timeouts stop completing), which stalled whole
    /// suites on a loaded machine. Redirects are not followed, so a test sees what was answered.
    static let client = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: {
            var c = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(120)))
            // Tests run in parallel against one server (scale-out sends hundreds of uploads at once).
            c.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            return c
        }())

    static func send(_ method: String, _ url: String, body: [UInt8]? = nil, headers: [String: String] = [:]) async throws -> HTTPResult {
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        for (k, v) in headers { request.headers.replaceOrAdd(name: k, value: v) }
        if let body {
            // URLSession's default for a body without a type, which the token endpoint's form tests rely on.
            if !request.headers.contains(name: "Content-Type") {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            }
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 512 << 20)
        var out: [String: String] = [:]
        for (k, v) in response.headers {
            let key = k.lowercased()
            out[key] = out[key].map { "\($0), \(v)" } ?? v
        }
        return HTTPResult(status: Int(response.status.code), body: [UInt8](buffer: bytes), headers: out)
    }

    /// POSTs an envelope body, gzipped like the SDK does.
    static func upload(_ server: some TestTransport, _ envelope: WireEnvelope, headers: [String: String] = [:]) async throws -> HTTPResult {
        try await server.send(
            "POST", "/v1/locations", body: Gzip.deflate([UInt8](WireJSONWriter.encode(envelope))),
            headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"].merging(headers) { $1 })
    }
}

/// Where a route test sends its requests: a ``TestServer`` over a socket, or a ``RouterClient``
/// straight into the application's router in memory. A test written against this runs on
/// either; `withServer` and `withRouter` pick which.
protocol TestTransport: Sendable {
    /// Sends `method` to `path` (with its query) and returns the answer as the test sees it.
    func execute(_ method: String, _ path: String, body: [UInt8]?, headers: [String: String]) async throws -> HTTPResult
}

extension TestTransport {
    /// Sends `method` to `path` (with its query): ``HTTP/send(_:_:body:headers:)`` without the base URL.
    func send(_ method: String, _ path: String, body: [UInt8]? = nil, headers: [String: String] = [:]) async throws -> HTTPResult {
        try await execute(method, path, body: body, headers: headers)
    }
}

extension TestServer {
    func execute(_ method: String, _ path: String, body: [UInt8]?, headers: [String: String]) async throws -> HTTPResult {
        try await HTTP.send(method, base + path, body: body, headers: headers)
    }
}

/// Requests through Hummingbird's `.router` test framework: no socket and no NIO pipeline, so no
/// peer address (per-address limits are idle), `Host` is always `localhost`, and what the
/// HTTP/1 channel adds (`Date`, `Server`, connection handling) is absent. Bodies, statuses and
/// the headers a route sets are as on a socket.
struct RouterClient: TestTransport {
    let client: any TestClientProtocol

    func execute(_ method: String, _ path: String, body: [UInt8]?, headers: [String: String]) async throws -> HTTPResult {
        var fields = HTTPFields()
        for (k, v) in headers {
            guard let name = HTTPField.Name(k) else { throw TestFailure("not a header name: \(k)") }
            fields[name] = v
        }
        // As ``HTTP/send(_:_:body:headers:)``: a body without a type is a form.
        if body != nil, fields[.contentType] == nil { fields[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await client.execute(
            uri: path, method: HTTPRequest.Method(method) ?? .get, headers: fields, body: body.map { ByteBuffer(bytes: $0) })
        var out: [String: String] = [:]
        for field in response.headers {
            let key = field.name.canonicalName
            out[key] = out[key].map { "\($0), \(field.value)" } ?? field.value
        }
        return HTTPResult(status: Int(response.status.code), body: [UInt8](buffer: response.body), headers: out)
    }
}

/// Builders for envelopes.
enum Fixtures {
    static let ids = UUIDv7Generator()
    static let base: Int64 = 1_781_500_000_000  // 2026-06-15

    static func locations(_ count: Int, startMillis: Int64 = base, stepMillis: Int64 = 30_000) -> [WireLocation] {
        (0..<count).map { i in
            WireLocation(
                id: ids.next(), timestamp: WireTimestamp(millis: startMillis + Int64(i) * stepMillis),
                trigger: .interval, motion: .moving, latitude: 52.52 + Double(i) * 0.0001,
                longitude: 13.405 + Double(i) * 0.0002, accuracy: 5, speed: 1.5, bearing: 90, altitude: 34.5,
                activity: .walking)
        }
    }

    static func envelope(
        _ locations: [WireLocation], session: UUID = ids.next(), install: UUID = ids.next(),
        events: [WireGeofenceEvent] = [], extras: [String: String] = [:]
    ) -> WireEnvelope {
        WireEnvelope(
            // Sent when its newest fix was taken: no real clock in a fixture the server stores.
            batchId: ids.next(), sessionId: session, sentAt: locations.last?.timestamp ?? WireTimestamp(millis: 1_767_225_600_000),
            device: WireDevice(installId: install, platform: "linux", sdkVersion: "0.1.0", model: "test-rig"),
            extras: extras, locations: locations, geofenceEvents: events)
    }
}
