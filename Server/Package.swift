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
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
    ],
    targets: [
        // System zlib, used for a strict, size-capped streaming gunzip (and gzip in tests/bench).
        .systemLibrary(name: "CIngestZlib", path: "Sources/CIngestZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "BeekonIngest",
            dependencies: [
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                "CIngestZlib",
            ],
            // The published contract, compiled into the binary and served at /openapi.json
            // and /schemas/envelope-v1.json (no resource bundle to ship beside the executable).
            resources: [
                .embedInCode("Contract/openapi.json"), .embedInCode("Contract/envelope-v1.schema.json"),
                // The dashboard page (issue 15): one self-contained file served at / and /dashboard.
                .embedInCode("Dashboard/dashboard.html"),
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
        .target(name: "PostgresTestCluster"),
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
                "BeekonIngest", "PostgresTestCluster", "IngestLoopback",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonTesting", package: "Beekon"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/LiveBench"
        ),
        .testTarget(
            name: "BeekonIngestTests",
            dependencies: [
                "BeekonIngest", "PostgresTestCluster", "IngestLoopback",
                .product(name: "BeekonWire", package: "Beekon"),
                .product(name: "BeekonTesting", package: "Beekon"),
                .product(name: "BeekonSources", package: "Beekon"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
