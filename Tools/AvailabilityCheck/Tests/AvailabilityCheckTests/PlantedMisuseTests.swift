import AvailabilityCheckCore
import Testing

/// Issue 27 (item 2): planted misuses of a standard-library type, a Foundation API and
/// CoreLocation APIs are caught; the guarded forms (`if #available`, `guard #available`,
/// `@available` on the declaration, its type or extension, `#if os(…)` / `canImport`) are accepted.
@Suite struct PlantedMisuseTests {
    /// The deployment targets the issue found the package claiming (iOS 15), with macOS 12.
    let old = AvailabilityChecker(deployment: [.iOS: Version("15.0")!, .macOS: Version("12.0")!])
    /// The package's targets (Package.swift).
    let current = AvailabilityChecker(deployment: [.iOS: Version("16.0")!, .macOS: Version("13.0")!])

    func symbols(_ report: Report) -> [String] { report.findings.map { "\($0.symbol)@\($0.platform.rawValue):\($0.line)" } }

    @Test func standardLibraryDurationAndClockAreCaughtBelowIOS16() {
        let report = old.check(
            source: """
                struct Timer {
                    let period: Duration
                    func wait(clock: some Clock<Duration>) async throws {
                        try await Task.sleep(for: .seconds(1))
                        try await Task.sleep(nanoseconds: 1)
                        _ = ContinuousClock.now
                    }
                }
                """)
        #expect(
            Set(symbols(report)) == [
                "Duration@iOS:2", "Duration@macOS:2", "Clock@iOS:3", "Clock@macOS:3", "Duration@iOS:3", "Duration@macOS:3",
                "Task.sleep(for:)@iOS:4", "Task.sleep(for:)@macOS:4", "ContinuousClock@iOS:6", "ContinuousClock@macOS:6",
            ])
        #expect(report.findings.first?.message.contains("only available in iOS 16.0 or newer (deployment target 15.0)") == true)
        #expect(report.findings.allSatisfy { $0.source.contains("swiftinterface") || $0.source.contains("swiftmodule") })
        #expect(current.check(source: "struct Timer { let period: Duration }").findings.isEmpty)
    }

    @Test func guardedStandardLibraryUsesAreAccepted() {
        let report = old.check(
            source: """
                @available(iOS 16.0, macOS 13.0, *)
                struct Timer { let period: Duration }

                @available(iOS 16, macOS 13, *)
                extension Int { var asDuration: Duration { .seconds(self) } }

                struct Holder {
                    @available(iOS, introduced: 16.0) @available(macOS, introduced: 13.0)
                    func wait() async throws { try await Task.sleep(for: .seconds(1)) }

                    func branch() async throws {
                        if #available(iOS 16.0, macOS 13.0, *) {
                            _ = ContinuousClock()
                        } else {
                            try await Task.sleep(nanoseconds: 1)
                        }
                        if #unavailable(iOS 16.0, macOS 13.0) {
                        } else {
                            _ = SuspendingClock()
                        }
                    }

                    func early() async throws {
                        guard #available(iOS 16.0, macOS 13.0, *) else { return }
                        try await Task.sleep(for: .seconds(1))
                    }
                }
                """)
        #expect(report.findings.isEmpty, "\(report.findings)")
        #expect(report.references > 0)
    }

    @Test func aGuardForOnePlatformLeavesTheOtherCaught() {
        let report = old.check(
            source: """
                func f() {
                    if #available(iOS 16.0, *) { _ = ContinuousClock() }
                }
                guard #available(iOS 16, *) else { fatalError() }
                let c = ContinuousClock()
                """)
        #expect(symbols(report) == ["ContinuousClock@macOS:2", "ContinuousClock@macOS:5"])
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
        #expect(
            Set(symbols(old.check(source: planted))) == [
                "URL(filePath:)@iOS:2", "URL(filePath:)@macOS:2", ".appending(path:)@iOS:4", ".appending(path:)@macOS:4",
                "Calendar.RecurrenceRule@iOS:6", "Calendar.RecurrenceRule@macOS:6",
            ])
        #expect(Set(symbols(current.check(source: planted))) == ["Calendar.RecurrenceRule@iOS:6", "Calendar.RecurrenceRule@macOS:6"])
        // #Predicate (a macro) and Predicate (the type) are iOS 17 / macOS 14.
        let predicate = current.check(source: "import Foundation\nlet p = #Predicate<Int> { $0 > 1 }")
        #expect(Set(symbols(predicate)) == ["Predicate@iOS:2", "Predicate@macOS:2"])
        // Without the import nothing of Foundation is in scope: a project type of that name is not flagged.
        #expect(current.check(source: "struct Predicate {}\nlet p = Predicate()").findings.isEmpty)
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
        #expect(macOSFinding?.source.contains("CLBackgroundActivitySession.h") == true)
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
        #expect(
            symbols(report) == ["CLAuthorizationStatus.authorizedWhenInUse@macOS:4", "CLAuthorizationStatus.authorizedWhenInUse@macOS:8"])
    }

    @Test func inactiveConditionalCompilationIsSkippedAndUnknownBranchesAreChecked() {
        let report = old.check(
            source: """
                #if os(Linux)
                    let a: Duration = .zero
                #elseif canImport(UIKit)
                    let b: Duration = .zero
                #else
                    let c: Duration = .zero
                #endif
                #if BEEKON_APPLE_SHIM
                    let d: Duration = .zero
                #endif
                #if DEBUG
                    let e: Duration = .zero
                #endif
                #if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
                    let f: Duration = .zero
                #endif
                """)
        #expect(
            Set(symbols(report)) == [
                "Duration@iOS:4", "Duration@macOS:6", "Duration@iOS:12", "Duration@macOS:12", "Duration@iOS:15", "Duration@macOS:15",
            ])
    }

    @Test func unavailableDeclarationsAreSkipped() {
        let report = old.check(
            source: """
                @available(*, unavailable)
                func never(_ d: Duration) {}
                @available(macOS, unavailable)
                func iOSOnly(_ d: Duration) {}
                """)
        #expect(symbols(report) == ["Duration@iOS:4"])
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
