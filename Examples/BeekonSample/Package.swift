// swift-tools-version:6.1
import PackageDescription

// The sample app (issue 27): a SwiftUI app on the SDK — start/stop, the live state, a live
// map, today's history, a locate answer. A package rather than an .xcodeproj: a project file
// cannot be written or checked without Xcode, this can be read in review, opened in Xcode and
// built by `xcodebuild` (.github/workflows/apple.yml). The screen and its model are the library
// `BeekonSampleUI` (built for iOS and macOS); `BeekonSample` is the executable that shows it
// (`swift run BeekonSample` on a Mac; on an iPhone, an app target whose `App` is the same five
// lines, since SwiftPM cannot make an iOS app bundle). iOS 17 / macOS 14 for SwiftUI's MapKit content (`Map`,
// `MapPolyline`, `Marker`); the SDK itself needs iOS 16 / macOS 13.
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
