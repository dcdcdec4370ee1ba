import AvailabilityCheckCore
import Testing

/// Issue 27 (item 2), issue 48: planted misuses of standard-library, Foundation and CoreLocation
/// APIs newer than the deployment targets are caught with the table generated from Apple's SDK;
/// the guarded forms (`if #available`, `guard #available`, `@available` on the declaration, its
/// type or extension, `#if os(…)` / `canImport`) are accepted, and so are older overloads that
/// share a name with a newer one.
@Suite struct PlantedMisuseTests {
    /// The package's targets (Package.swift), which the table is generated for.
    let current = AvailabilityChecker(deployment: [.iOS: Version("16.0")!, .macOS: Version("13.0")!])

    func symbols(_ report: Report) -> [String] { report.findings.map { "\($0.symbol)@\($0.platform.rawValue):\($0.line)" } }

    /// Issue 48: the two uses an iOS 16 build against Apple's SDK refused, as they were written.
    @Test func stringValidatingAsIsCaughtAtIOS16() {
        let report = current.check(
            source: """
                import Foundation
                func string(_ raw: UnsafeRawBufferPointer) -> String? {
                    guard let text = String(validating: raw, as: UTF8.self) else { return nil }
                    return text
                }
                func isUTF8(_ data: Data) -> Bool { String(validating: data, as: UTF8.self) != nil }
                func explicit(_ bytes: [UInt8]) -> String? { String.init(validating: bytes, as: UTF8.self) }
                """)
        #expect(
            Set(symbols(report)) == [
                "String(validating:as:)@iOS:3", "String(validating:as:)@macOS:3", "String(validating:as:)@iOS:6",
                "String(validating:as:)@macOS:6", "String(validating:as:)@iOS:7", "String(validating:as:)@macOS:7",
            ])
        #expect(report.findings.first?.message.contains("only available in iOS 18.0 or newer (deployment target 16.0)") == true)
        #expect(report.findings.allSatisfy { $0.source.contains(SymbolTable.generatedProvenance) })
    }

    @Test func olderOverloadsOfTheSameNameAndGuardedUsesAreAccepted() {
        let report = current.check(
            source: """
                import Foundation
                func strings(_ bytes: [UInt8], _ c: UnsafePointer<CChar>) -> [String?] {
                    var all = [String(validatingCString: c), String(decoding: bytes, as: UTF8.self), String(bytes: bytes, encoding: .utf8)]
                    if #available(iOS 18.0, macOS 15.0, *) { all.append(String(validating: bytes, as: UTF8.self)) }
                    return all
                }
                @available(iOS 18, macOS 15, *)
                func later(_ bytes: [UInt8]) -> String? { String(validating: bytes, as: UTF8.self) }
                """)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.references > 0)
    }

    @Test func standardLibraryTypesAndFunctionsAreCaught() {
        let report = current.check(
            source: """
                struct Pages {
                    let ranges: RangeSet<Int>
                    func run() async {
                        await withDiscardingTaskGroup { _ in }
                        try? await Task.sleep(for: .seconds(1))
                        await withTaskGroup(of: Int.self) { _ in }
                    }
                }
                """)
        #expect(
            Set(symbols(report)) == [
                "RangeSet@iOS:2", "RangeSet@macOS:2", "withDiscardingTaskGroup(returning:isolation:body:)@iOS:4",
                "withDiscardingTaskGroup(returning:isolation:body:)@macOS:4",
            ])
    }

    @Test func guardedStandardLibraryUsesAreAccepted() {
        let report = current.check(
            source: """
                @available(iOS 18.0, macOS 15.0, *)
                struct Pages { let ranges: RangeSet<Int> }

                @available(iOS 18, macOS 15, *)
                extension Int { var asSet: RangeSet<Int> { RangeSet() } }

                struct Holder {
                    @available(iOS, introduced: 17.0) @available(macOS, introduced: 14.0)
                    func wait() async { await withDiscardingTaskGroup { _ in } }

                    func branch() async {
                        if #available(iOS 18.0, macOS 15.0, *) {
                            _ = RangeSet<Int>()
                        }
                        if #unavailable(iOS 18.0, macOS 15.0) {
                        } else {
                            _ = RangeSet<Int>()
                        }
                    }

                    func early() async {
                        guard #available(iOS 17.0, macOS 14.0, *) else { return }
                        await withDiscardingTaskGroup { _ in }
                    }
                }
                """)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.references > 0)
    }

    @Test func aGuardForOnePlatformLeavesTheOtherCaught() {
        let report = current.check(
            source: """
                func f() {
                    if #available(iOS 18.0, *) { _ = RangeSet<Int>() }
                }
                guard #available(iOS 18, *) else { fatalError() }
                let c = RangeSet<Int>()
                """)
        #expect(symbols(report) == ["RangeSet@macOS:2", "RangeSet@macOS:5"])
    }

    @Test func foundationAPIsAreCaught() {
        let planted = """
            import Foundation
            let file = URL(filePath: "/tmp/a")
            let legacy = URL(fileURLWithPath: "/tmp/a")
            let child = legacy.appending(path: "b")
            let older = legacy.appendingPathComponent("b")
            let rule = Calendar.RecurrenceRule.daily(calendar: .current)
            """
        // URL(filePath:) and appending(path:) are iOS 16 / macOS 13: at the deployment targets, not in the table.
        #expect(
            Set(symbols(current.check(source: planted))) == [
                "Calendar.RecurrenceRule@iOS:6", "Calendar.RecurrenceRule@macOS:6", ".daily(calendar:…)@iOS:6",
                ".daily(calendar:…)@macOS:6",
            ])
        // #Predicate (a macro) and Predicate (the type) are iOS 17 / macOS 14.
        let predicate = current.check(source: "import Foundation\nlet p = #Predicate<Int> { $0 > 1 }")
        #expect(Set(symbols(predicate)) == ["Predicate@iOS:2", "Predicate@macOS:2"])
        // Without the import nothing of Foundation is in scope; with it, a project type of that name shadows it.
        #expect(current.check(source: "let p = Predicate<Int>()").findings.isEmpty)
        #expect(current.check(source: "import Foundation\nstruct Predicate {}\nlet p = Predicate()").findings.isEmpty)
    }

    @Test func membersOfUnknownReceiversAreCaughtOnlyWhenEveryDeclarationIsNew() {
        let planted = """
            import CoreLocation
            func watch(_ monitor: CLMonitor, _ update: CLLocationUpdate) async throws {
                _ = update.isStationary
                _ = try await monitor.record(for: "a")
            }
            """
        let report = current.check(source: planted)
        #expect(
            Set(symbols(report).filter { $0.hasPrefix(".") }) == [
                ".isStationary@iOS:3", ".isStationary@macOS:3", ".record(for:…)@iOS:4", ".record(for:…)@macOS:4",
            ])
        // A project member of the same name is never taken for Apple's.
        let own = current.check(source: "import CoreLocation\nstruct Fix { var isStationary = false }\nlet s = Fix().isStationary")
        #expect(own.findings.isEmpty, "\(own.findings)")
        // Nor a tuple label: the standard library's (`enumerated()`'s `element`) or the project's own.
        let tuples = current.check(
            source: """
                import CoreLocation
                let a = [1].enumerated().map { $0.element }
                let p = (isStationary: true, count: 1)
                let q = p.isStationary
                """)
        #expect(tuples.findings.isEmpty, "\(tuples.findings)")
    }

    /// The sample's `.insufficientlyInUse` is the SDK's `LocationHealth`, declared in the package
    /// the sample depends on (not checked with it), not CoreLocation's iOS 18 diagnostic.
    @Test func membersDeclaredInALocalDependencyAreTheProjectsOwn() {
        let sources = [
            "app.swift": "import CoreLocation\nlet all: [LocationHealth] = [.insufficientlyInUse]",
            "sdk.swift": "public struct LocationHealth: OptionSet { public static let insufficientlyInUse = LocationHealth(rawValue: 1) }",
        ]
        let alone = current.check(files: ["app.swift"]) { sources[$0]! }
        #expect(Set(symbols(alone)) == [".insufficientlyInUse@iOS:2", ".insufficientlyInUse@macOS:2"])
        let withDependency = current.check(files: ["app.swift"], declarationsFrom: ["sdk.swift"]) { sources[$0]! }
        #expect(withDependency.findings.isEmpty, "\(withDependency.findings)")
    }

    @Test func coreLocationMonitorAndSessionsAreCaught() {
        let planted = """
            import CoreLocation
            final class Regions {
                var monitor: CLMonitor?
                func open() async { monitor = await CLMonitor("fences") }
                func sessions() {
                    _ = CLServiceSession(authorization: .always)
                    if #available(iOS 17.0, macOS 14.0, *) { _ = CLBackgroundActivitySession() }
                }
            }
            """
        #expect(
            Set(symbols(current.check(source: planted))) == [
                "CLMonitor@iOS:3", "CLMonitor@macOS:3", "CLMonitor@iOS:4", "CLMonitor@macOS:4",
                "CLServiceSession@iOS:6", "CLServiceSession@macOS:6",
                // unavailable on macOS: no #available makes it compile there
                "CLBackgroundActivitySession@macOS:7",
            ])
        let macOSFinding = current.check(source: planted).findings.first { $0.symbol == "CLBackgroundActivitySession" }
        #expect(macOSFinding?.message.contains("unavailable on macOS") == true)
        #expect(macOSFinding?.source.contains("CoreLocation") == true)
    }

    @Test func guardedCoreLocationUsesAreAccepted() {
        let report = current.check(
            source: """
                import CoreLocation
                @available(iOS 17.0, macOS 14.0, *)
                actor Pager {
                    private var monitor: CLMonitor?
                    func add() async { await monitor?.add(CLMonitor.CircularGeographicCondition(center: .init(), radius: 1), identifier: "a") }
                }
                @available(iOS 17.0, *)
                @available(macOS, unavailable)
                final class Sessions {
                    var background: CLBackgroundActivitySession?
                    func start() {
                        background = CLBackgroundActivitySession()
                        if #available(iOS 18.0, *) { _ = CLServiceSession(authorization: .always) }
                    }
                }
                func status(_ manager: CLLocationManager) -> Int {
                    switch manager.authorizationStatus {
                    case .notDetermined: return 0
                    #if os(iOS)
                        case .authorizedWhenInUse: return 1
                    #endif
                    default: return 2
                    }
                }
                #if os(iOS)
                    @available(iOS 17.0, *)
                    func hold() -> CLBackgroundActivitySession { CLBackgroundActivitySession() }
                #endif
                """)
        #expect(report.findings.isEmpty, "\(report.findings)")
    }

    @Test func anUnguardedWhenInUseCaseFailsOnMacOSOnly() {
        let report = current.check(
            source: """
                import CoreLocation
                func status(_ s: CLAuthorizationStatus) -> Bool {
                    switch s {
                    case .authorizedWhenInUse: return true
                    default: return false
                    }
                }
                let explicit = CLAuthorizationStatus.authorizedWhenInUse
                """)
        #expect(symbols(report) == [".authorizedWhenInUse@macOS:4", "CLAuthorizationStatus.authorizedWhenInUse@macOS:8"])
    }

    @Test func inactiveConditionalCompilationIsSkippedAndUnknownBranchesAreChecked() {
        let report = current.check(
            source: """
                #if os(Linux)
                    let a = RangeSet<Int>()
                #elseif canImport(UIKit)
                    let b = RangeSet<Int>()
                #else
                    let c = RangeSet<Int>()
                #endif
                #if BEEKON_APPLE_SHIM
                    let d = RangeSet<Int>()
                #endif
                #if DEBUG
                    let e = RangeSet<Int>()
                #endif
                #if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
                    let f = RangeSet<Int>()
                #endif
                """)
        #expect(
            Set(symbols(report)) == [
                "RangeSet@iOS:4", "RangeSet@macOS:6", "RangeSet@iOS:12", "RangeSet@macOS:12", "RangeSet@iOS:15", "RangeSet@macOS:15",
            ])
    }

    @Test func unavailableDeclarationsAreSkipped() {
        let report = current.check(
            source: """
                @available(*, unavailable)
                func never(_ d: RangeSet<Int>) {}
                @available(macOS, unavailable)
                func iOSOnly(_ d: RangeSet<Int>) {}
                """)
        #expect(symbols(report) == ["RangeSet@iOS:4"])
    }

    @Test func importingUIKitOnMacOSIsCaught() {
        #expect(symbols(current.check(source: "import UIKit")) == ["import UIKit@macOS:1"])
        #expect(current.check(source: "#if canImport(UIKit)\nimport UIKit\n#endif").findings.isEmpty)
    }

    @Test func deploymentTargetsAreReadFromTheManifest() {
        let targets = Manifest.deploymentTargets(
            packageSwift: """
                let package = Package(name: "X", platforms: [.macOS(.v10_15), .iOS("16.4"), .watchOS(.v9)], targets: [])
                """)
        #expect(targets == [.macOS: Version("10.15")!, .iOS: Version("16.4")!])
    }

    @Test func availabilityArgumentsParse() {
        #expect(Availability(arguments: "iOS 17.0, macOS 14, *").introduced == [.iOS: Version("17")!, .macOS: Version("14")!])
        #expect(Availability(arguments: "macOS, unavailable").unavailable == [.macOS])
        #expect(Availability(arguments: "iOS, introduced: 17.0, deprecated: 18.0, message: \"a, b\"").introduced == [.iOS: Version("17")!])
        #expect(Availability(arguments: "*, unavailable").unavailable == [.iOS, .macOS])
        #expect(Availability(arguments: "watchOS 10, tvOS 17, *").introduced.isEmpty)
    }
}
