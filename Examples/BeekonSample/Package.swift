// swift-tools-version:6.1
import PackageDescription

// The sample (issues 27, 48): a SwiftUI app on the SDK. The screen and its model are the
// library `BeekonSampleUI` (iOS 17 and macOS 14, for SwiftUI's MapKit content: `Map`,
// `MapPolyline`, `Marker`; the SDK itself needs iOS 16 / macOS 13); `BeekonSample` is the macOS
// executable that shows it (`swift run BeekonSample`). The iPhone app is `iOS/project.yml`, an
// XcodeGen spec compiling `Sources/BeekonSampleUI` and `Sources/BeekonSampleiOS` (not a target
// here: SwiftPM cannot make an iOS app bundle); see README.md.
let package = Package(
    name: "BeekonSample",
    platforms: [.iOS(.v17), .macOS(.v14)],
    products: [
        .library(name: "BeekonSampleUI", targets: ["BeekonSampleUI"]),
        .executable(name: "BeekonSample", targets: ["BeekonSample"]),
    ],
    dependencies: [.package(name: "Beekon", path: "../..")],
    targets: [
        .target(name: "BeekonSampleUI", dependencies: [.product(name: "Beekon", package: "Beekon")]),
        .executableTarget(
            name: "BeekonSample",
            dependencies: ["BeekonSampleUI", .product(name: "Beekon", package: "Beekon")],
            linkerSettings: [
                // A Mac executable outside an app bundle reads its Info.plist (the location usage
                // string CoreLocation requires) from this section.
                .unsafeFlags(
                    [
                        "-Xlinker", "-sectcreate", "-Xlinker", "__TEXT", "-Xlinker", "__info_plist",
                        "-Xlinker", Context.packageDirectory + "/Info.plist",
                    ], .when(platforms: [.macOS]))
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
