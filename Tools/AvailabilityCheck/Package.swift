// swift-tools-version:6.1
import PackageDescription

// The availability check (issue 27): parses the SDK's Swift sources with swift-syntax and fails
// when an API newer than the deployment targets in the root Package.swift is used outside
// `if #available` / `guard #available` / `@available`. Its own package, so the SDK and every app
// that adds it never resolve swift-syntax. Run by .ci/run on Linux; the root README, "Platforms, Apple
// CI and the sample app", says what it covers.
let package = Package(
    name: "AvailabilityCheck",
    platforms: [.macOS(.v13)],
    products: [.executable(name: "availability-check", targets: ["availability-check"])],
    dependencies: [.package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1")],
    targets: [
        .target(
            name: "AvailabilityCheckCore",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
            ]
        ),
        .executableTarget(name: "availability-check", dependencies: ["AvailabilityCheckCore"]),
        .testTarget(name: "AvailabilityCheckTests", dependencies: ["AvailabilityCheckCore"]),
    ],
    swiftLanguageModes: [.v6]
)
