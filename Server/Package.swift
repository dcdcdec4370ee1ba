// swift-tools-version:6.1
import PackageDescription

// The ingest server is its own package so that apps linking the SDK never
// resolve a web server, a PostgreSQL driver or NIO. It shares the wire format
// with the SDK through the root package's `BeekonWire` product.
let package = Package(
    name: "BeekonIngest",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "beekon-ingest", targets: ["beekon-ingest"]),
        .library(name: "BeekonIngest", targets: ["BeekonIngest"]),
    ],
    dependencies: [
        .package(name: "Beekon", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // Already resolved through Hummingbird; named for the event-driven live stream's NIO pipeline.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        // Already resolved through async-http-client; named for the push senders' TLS trust roots
        // and the tests' local HTTP/2 server standing where APNs stands (issue 30).
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", exact: "1.46.0"),
        // Latency percentiles of the open-loop load generator (scripts/load.sh, issue 32).
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", exact: "0.2.0"),
    ],
    targets: [
        .target(
            name: "BeekonIngest",
            dependencies: [
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 for the FCM service-account JWT (issue 30).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // HTTP/2 to APNs and HTTPS to FCM (issue 30).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The strict, size-capped gunzip of request bodies: the SDK's own gzip (one implementation).
                .product(name: "BeekonGzip", package: "Beekon"),
                // The SDK's lock type and Douglas–Peucker (one implementation each).
                .product(name: "BeekonPrimitives", package: "Beekon"),
            ],
            // The published contract, compiled into the binary and served at /openapi.json
            // and /schemas/envelope-v1.json (no resource bundle to ship beside the executable).
            resources: [
                .embedInCode("Contract/openapi.json"), .embedInCode("Contract/envelope-v1.schema.json"),
                // The dashboard page (issue 15): one self-contained file served at / and /dashboard.
                .embedInCode("Dashboard/dashboard.html"), .embedInCode("Dashboard/dashboard_map.js"),
            ]
        ),
        .executableTarget(
            name: "beekon-ingest",
            dependencies: [
                "BeekonIngest",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A throw-away PostgreSQL cluster for the tests and the benchmark (not a product).
        // posix_spawn with the child-side chdir and close_range file actions (glibc, _GNU_SOURCE),
        // and the one child-process type of the tests and tools built on it.
        .target(name: "CSpawn"),
        .target(name: "ProcessSpawn", dependencies: ["CSpawn"]),
        .target(name: "PostgresTestCluster", dependencies: ["IngestLoopback", "ProcessSpawn"]),
        // The fault-injecting proxy, child processes and server process of the Server tests
        // and the chaos harness: one implementation for both (not a product).
        .target(
            name: "BeekonChaos",
            dependencies: [
                "BeekonIngest", "IngestLoopback", "ProcessSpawn", .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonGzip", package: "Beekon"), .product(name: "BeekonPrimitives", package: "Beekon"),
            ]
        ),
        // The long chaos run (scripts/chaos.sh): real agents and servers, SIGKILLs, live viewers.
        .executableTarget(
            name: "beekon-chaos",
            dependencies: [
                "BeekonChaos", "PostgresTestCluster", "IngestLoopback",
                .product(name: "BeekonTesting", package: "Beekon"),
                .product(name: "BeekonPrimitives", package: "Beekon"),
                // The viewers read the live stream with the wire module's SSE parser.
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The root package's POSIX loopback sockets for test servers and proxies: the same
        // source file, through a symlink (it is test plumbing, not a product of the SDK).
        .target(name: "IngestLoopback", path: "Tests/IngestLoopback"),
        .executableTarget(
            name: "IngestBench",
            dependencies: [
                "BeekonIngest", "PostgresTestCluster",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/IngestBench"
        ),
        // Live-stream latency, backfill and idle-viewer memory (issue 14; scripts/bench.sh).
        .executableTarget(
            name: "LiveBench",
            dependencies: [
                "BeekonIngest", "BeekonChaos", "BeekonLoad", "PostgresTestCluster", "IngestLoopback",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonTesting", package: "Beekon"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/LiveBench"
        ),
        // Time to first render of a month of 1 Hz history, overview tier vs raw (issue 15; scripts/bench.sh).
        .executableTarget(
            name: "HistoryBench",
            dependencies: [
                "BeekonIngest", "PostgresTestCluster",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/HistoryBench"
        ),
        // The open-loop load generator's schedule, latency report, read-back check and SSE viewer
        // fleet (issue 32; scripts/load.sh). LiveBench shares the viewer fleet.
        // <sys/epoll.h> for the viewer fleet's reader (Swift's Glibc module leaves it out).
        .target(name: "CEpoll"),
        .target(
            name: "BeekonLoad",
            dependencies: [
                "IngestLoopback",
                "CEpoll",
                .product(name: "BeekonPrimitives", package: "Beekon"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // scripts/load.sh: devices or SSE viewers against running ingest servers, open loop.
        .executableTarget(
            name: "beekon-load",
            dependencies: [
                "BeekonLoad",
                "BeekonIngest",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonGzip", package: "Beekon"),
                .product(name: "BeekonPrimitives", package: "Beekon"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "BeekonLoadTests",
            dependencies: [
                "BeekonLoad",
                "IngestLoopback",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "BeekonIngestTests",
            dependencies: [
                "BeekonIngest", "BeekonChaos", "PostgresTestCluster", "IngestLoopback", "ProcessSpawn",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonGzip", package: "Beekon"),
                .product(name: "BeekonPrimitives", package: "Beekon"),
                .product(name: "BeekonTesting", package: "Beekon"),
                .product(name: "BeekonSources", package: "Beekon"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // Group-commit tests hold the SQLite writer lock and inject a failing row (a trigger).
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
