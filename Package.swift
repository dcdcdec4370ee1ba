// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Beekon",
    platforms: [.macOS(.v13), .iOS(.v15)],
    products: [
        .library(name: "Beekon", targets: ["Beekon"]),
        .library(name: "BeekonWire", targets: ["BeekonWire"]),
        .library(name: "BeekonSources", targets: ["BeekonSources"]),
        .library(name: "BeekonTesting", targets: ["BeekonTesting"]),
        // Beacon ranging (SPEC BY-5) in its own module: an app that does not range links none of it.
        .library(name: "BeekonBeacons", targets: ["BeekonBeacons"]),
        .executable(name: "beekon", targets: ["BeekonAgent"]),
        // A product only so that scripts/bench.sh can build it inside the Server package's
        // build, which compiles the shared dependencies (swift-crypto's BoringSSL, GRDB, …) once.
        .executable(name: "BeekonBench", targets: ["BeekonBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    ],
    targets: [
        // Schema v1 wire format: no dependencies, shared with the ingest server.
        .target(name: "BeekonWire"),
        // zlib from the system (gzip bodies); no NIO needed in the SDK.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "Beekon",
            dependencies: [
                "BeekonWire", "CZlib",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(name: "BeekonSources", dependencies: ["Beekon", "BeekonWire"]),
        .target(name: "BeekonTesting", dependencies: ["Beekon"]),
        .target(name: "BeekonBeacons", dependencies: ["Beekon"]),
        .executableTarget(
            name: "BeekonAgent",
            dependencies: [
                "Beekon", "BeekonSources", "BeekonBeacons",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Samples")]
        ),
        .executableTarget(
            name: "BeekonBench",
            dependencies: [
                "Beekon", "BeekonSources", "BeekonBeacons", "BeekonTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/BeekonBench"
        ),
        .testTarget(name: "BeekonWireTests", dependencies: ["BeekonWire"], resources: [.copy("Golden")]),
        .testTarget(
            name: "BeekonTests",
            dependencies: ["Beekon", "BeekonTesting", "BeekonWire", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // The beacon fuzzers live here, next to the track-reader fuzzers whose knobs and tally they share.
        .testTarget(name: "BeekonSourcesTests", dependencies: ["BeekonSources", "BeekonBeacons", "Beekon", "BeekonTesting"]),
        .testTarget(name: "BeekonBeaconsTests", dependencies: ["BeekonBeacons", "Beekon", "BeekonTesting"]),
        .testTarget(name: "BeekonTestingTests", dependencies: ["BeekonTesting", "Beekon"]),
        .testTarget(name: "BeekonAgentTests", dependencies: ["BeekonAgent", "Beekon", "BeekonWire", "BeekonTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
