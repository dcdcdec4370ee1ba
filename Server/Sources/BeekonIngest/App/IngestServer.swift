import BeekonPrimitives
import BeekonWire
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// Builds the `beekon-ingest` application: store, token service, routes and
/// the services it runs (the PostgreSQL pool, if any, and the HTTP server).
package enum IngestServer {
    /// Opens the store the configuration names (does not migrate yet).
    package static func makeStore(_ config: IngestConfiguration, logger: Logger) throws(StoreError) -> any LocationStore {
        switch config.database {
        case .sqlite(let path): return try SQLiteLocationStore(path: path, groupCommit: config.groupCommit, logger: logger)
        case .postgres(let location):
            return PostgresLocationStore(
                location: location, operationTimeout: .seconds(config.databaseTimeoutSeconds), groupCommit: config.groupCommit,
                logger: logger)
        }
    }

    /// Builds the application. Migrations and the signing-key load run before the
    /// server accepts connections; `onListening` gets the bound host and port
    /// (useful with port 0), which is also logged as `listening on HOST:PORT`. Tests drive the
    /// live stream's heartbeat with `liveHeartbeats` (nil: a tick every `liveHeartbeatSeconds`).
    package static func buildApplication(
        _ config: IngestConfiguration,
        logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() },
        liveHeartbeats: AsyncStream<Void>? = nil,
        onListening: @escaping @Sendable (String, Int) async -> Void = { _, _ in }
    ) throws(StoreError) -> some ApplicationProtocol & Service {
        buildApplication(
            config, store: try makeStore(config, logger: logger), logger: logger, now: now, liveHeartbeats: liveHeartbeats,
            onListening: onListening)
    }

    /// Builds the application around an existing store (tests use this to inject failures).
    package static func buildApplication(
        _ config: IngestConfiguration,
        store: any LocationStore,
        logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() },
        liveHeartbeats: AsyncStream<Void>? = nil,
        onListening: @escaping @Sendable (String, Int) async -> Void = { _, _ in }
    ) -> some ApplicationProtocol & Service {
        let tokens = TokenService(
            store: store.tokens, accessTTLSeconds: config.accessTokenTTLSeconds,
            refreshTTLSeconds: config.refreshTokenTTLSeconds, now: now)
        // The background services that touch the store's tables start once it is migrated.
        let ready = StoreReadiness()
        let (router, liveServices, live, connections) = makeRoutes(
            config, store: store, tokens: tokens, now: now, liveHeartbeats: liveHeartbeats, ready: ready, logger: logger)
        let partitions = (store as? PostgresLocationStore).map {
            PartitionMaintainer(store: $0, retentionDays: config.retentionDays, now: now, logger: logger)
        }

        let host = config.host
        let firstRequestTimeout = TimeAmount.milliseconds(Int64(config.firstRequestTimeoutSeconds * 1000))
        // Between requests (the next head included) a keep-alive connection may idle this long.
        let idleTimeout = TimeAmount.milliseconds(Int64(config.idleTimeoutSeconds * 1000))
        // A request's body must arrive whole within this of its head (the idle timeout bounds only gaps).
        let bodyTimeout = TimeAmount.milliseconds(Int64(config.bodyTimeoutSeconds * 1000))
        var app = Application(
            router: router,
            // A connection whose first request is GET /v1/live is served event-driven (no task
            // per idle viewer); every other connection is Hummingbird's HTTP/1 channel.
            server: HTTPServerBuilder { responder in
                LiveServerChannel(
                    http1: HTTP1Channel(
                        responder: responder,
                        configuration: .init(
                            additionalChannelHandlers: [BodyDeadlineHandler(timeout: bodyTimeout)], idleTimeout: idleTimeout)),
                    live: live,
                    firstRequestTimeout: firstRequestTimeout, sendBufferBytes: config.liveSendBufferBytes, limit: connections)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: config.port), serverName: "beekon-ingest",
                backlog: config.listenBacklog ?? ConnectionLimit.defaultListenBacklog()),
            services: store.services + liveServices + [
                EventRetention(
                    store: store, retentionSeconds: config.effectiveEventRetentionSeconds, now: now, logger: logger, ready: ready),
                OverviewMaintainer(history: store.history, idle: .seconds(2), now: now, logger: logger, ready: ready),
            ] + (partitions.map { [$0] } ?? []),
            onServerRunning: { channel in
                do { try await AcceptBackoff.shorten(on: channel) } catch {
                    logger.warning("accept backoff left at NIO's default", metadata: ["error": "\(error)"])
                }
                let port = channel.localAddress?.port ?? config.port
                logger.info("listening on \(host):\(port)")
                await onListening(host, port)
            },
            logger: logger)
        app.beforeServerStarts {
            try await store.migrate()
            ready.open()
            await partitions?.runOnce()
            try await tokens.loadKey()
            logger.info("database ready", metadata: ["database": "\(config.database)", "ingest_path": "\(config.ingestPath)"])
            logger.info(
                "connection cap",
                metadata: [
                    "max_connections": "\(connections.maximum)",
                    "listen_backlog": "\(config.listenBacklog ?? ConnectionLimit.defaultListenBacklog())",
                ])
            if config.authRequired {
                logger.info("auth required", metadata: ["api_keys": "\(config.apiKeys.count)"])
            } else {
                logger.warning(
                    "AUTH IS OFF: anyone who can reach this server can upload and read every fix. Use --auth required with --api-key or tokens for anything beyond local use."
                )
            }
        }
        return app
    }

    /// Every route of the server on one router, with the services the routes need running
    /// (the live hub's tail reader and the device-status monitor). The contract test lists
    /// the routes against `openapi.json`: a route added without documentation fails it.
    package static func makeRouter(
        _ config: IngestConfiguration,
        store: any LocationStore,
        tokens: TokenService,
        now: @escaping @Sendable () -> Date,
        logger: Logger
    ) -> (router: Router<IngestRequestContext>, services: [any Service]) {
        let routes = makeRoutes(config, store: store, tokens: tokens, now: now, logger: logger)
        return (routes.router, routes.services)
    }

    /// The connection cap: `maxConnections`, or derived from the descriptor limit, whose soft
    /// value is raised to the hard one first (see ``ConnectionLimit``).
    static func connectionLimit(_ config: IngestConfiguration) -> ConnectionLimit {
        let descriptors = ConnectionLimit.raiseDescriptorLimit()
        return ConnectionLimit(
            maximum: config.maxConnections ?? ConnectionLimit.derived(fromDescriptorLimit: descriptors),
            perClient: config.maxConnectionsPerClient)
    }

    /// ``makeRouter(_:store:tokens:now:logger:)`` with the live controller, which the
    /// event-driven stream (``LiveServerChannel``) shares with the route.
    static func makeRoutes(
        _ config: IngestConfiguration,
        store: any LocationStore,
        tokens: TokenService,
        now: @escaping @Sendable () -> Date,
        liveHeartbeats: AsyncStream<Void>? = nil,
        ready: StoreReadiness? = nil,
        logger: Logger
    ) -> (router: Router<IngestRequestContext>, services: [any Service], live: LiveController, connections: ConnectionLimit) {
        let connections = connectionLimit(config)
        let auth = Authenticator(
            required: config.authRequired, apiKeys: config.apiKeys, enrollerKeys: config.enrollerKeys, tokens: tokens)
        let metrics = IngestMetrics()
        let router = Router(context: IngestRequestContext.self)
        // First, so that it guards every route: with auth off, only this machine's pages get in.
        let guarding = LocalOnlyGuard(config)
        router.add(middleware: LocalOnlyMiddleware<IngestRequestContext>(guarding: guarding))
        // Then, before any credential is looked up: an address past its budget of failures waits.
        let failures = AuthFailureLimit(perMinute: config.authFailuresPerMinute, now: now)
        router.add(middleware: AuthFailureMiddleware<IngestRequestContext>(limit: failures))
        let shares = ShareService(store: store, now: now, metrics: metrics, retention: config.shareAccessLog)
        // A circle's streams (issue 52) end when its members or their sharing change: the hub re-checks them.
        let circleStreams = Locked<CircleService?>(nil)
        let hub = makeHub(
            config, store: store, shares: shares, heartbeats: liveHeartbeats, logger: logger,
            circleStreamIsActive: { key in await circleStreams.value?.isActive(streamKey: key) ?? false })
        let monitor = DeviceStatusMonitor(
            store: store, defaultExpectedSeconds: config.expectedIntervalSeconds,
            interval: .milliseconds(Int(config.statusCheckSeconds * 1000)), now: now,
            logger: logger, onPublished: { hub.poke() })
        let access = ViewerAccess(auth: auth, shares: shares)
        let ids = UUIDv7Generator(now: now)
        let locates = LocateService(
            store: store.locates,
            limit: LocateRateLimit(intervalSeconds: config.locateIntervalSeconds, burst: config.locateBurst),
            expirySeconds: config.locateExpirySeconds, now: now, makeID: { ids.next() }, onChange: { hub.poke() })
        IngestController(
            store: store, auth: auth, metrics: metrics, maxBodyBytes: config.maxBodyBytes,
            maxDecompressedBytes: config.maxDecompressedBytes, now: now, hub: hub, monitor: monitor, locates: locates
        )
        .register(on: router, path: config.ingestPath)
        let pushes = PushDispatcher(
            config.push, tokens: store.pushTokens, locates: locates, metrics: metrics, now: now, logger: logger)
        // Visible nudges for devices that stopped reporting, through the same senders.
        let nudger = config.nudges.flatMap { policy in
            pushes.isEnabled
                ? DeviceNudger(
                    store: store, pushes: pushes, policy: policy, candidates: { monitor.knownTimes() },
                    interval: .milliseconds(Int64(config.nudgeCheckSeconds * 1000)), now: now, makeID: { ids.next() }, logger: logger,
                    ready: ready) : nil
        }
        LocateController(
            locates: locates, auth: auth, access: access, hub: hub, pushTokens: store.pushTokens, pushes: pushes,
            apnsTopics: config.push.apns?.topics,
            pollHolds: HoldLimit(maximum: config.maxLongPollsPerCredential, what: "command long-polls")
        ).register(on: router)
        let live = LiveController(
            store: store, hub: hub, access: access, retryMillis: config.liveRetryMillis, now: now, guarding: guarding,
            shareEventIDs: { tokens.liveEventIDs() }, streamHolds: HoldLimit(maximum: config.maxStreamsPerShare, what: "live streams"),
            failures: failures)
        live.register(on: router)
        let circles = CircleService(
            store: store.circles, auth: auth, locates: locates, pushes: pushes, policy: CircleWakePolicy(), now: now)
        circleStreams.value = circles
        let reads = ReadController(store: store, access: access, staleAfterSeconds: config.staleAfterSeconds, now: now, monitor: monitor)
        CircleController(circles: circles, view: CircleView(read: reads, circles: store.circles), live: live, tokens: tokens)
            .register(on: router)
        TokenController(tokens: tokens, metrics: metrics).register(on: router)
        DeviceAdminController(tokens: tokens, auth: auth).register(on: router)
        reads.register(on: router)
        HealthController(store: store, metrics: metrics, auth: auth, hub: hub, connections: connections).register(on: router)
        ShareController(shares: access.shares!, store: store, auth: auth, publicURL: config.publicURL).register(on: router)
        ContractController().register(on: router)
        DashboardController(history: store.history, access: access, tileURL: config.tileURL, now: now).register(on: router)
        // Last, so that it only sees requests no route matched: a known path with another
        // method gets 405 and `Allow`, an unknown path 404.
        router.add(
            middleware: MethodNotAllowedMiddleware<IngestRequestContext>(
                routes: router.routes.map { (path: $0.path.description, method: $0.method.rawValue) }))
        return (
            router,
            [hub, monitor, LocateExpiry(locates: locates, logger: logger, ready: ready)] + (pushes.isEnabled ? [pushes] : [])
                + (nudger.map { [$0] } ?? []), live,
            connections
        )
    }
}
