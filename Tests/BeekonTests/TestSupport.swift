import Beekon
import BeekonTesting
import Foundation

/// A fresh directory per test, removed when the value is released.
final class TempDir: @unchecked Sendable {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "beekon-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    var db: String { path + "/beekon.sqlite" }
}

/// A fix at `seconds` after the clock's start, `northMeters` north of a base point.
func fix(_ seconds: Double, north northMeters: Double = 0, accuracy: Double? = 5, base: Date = TestClock().now()) -> RawFix {
    RawFix(
        timestamp: base.addingTimeInterval(seconds),
        latitude: 48.0 + northMeters / 111_195.0, longitude: 11.0, accuracy: accuracy)
}

struct Harness {
    let dir = TempDir()
    let clock = TestClock()
    let provider = ScriptedProvider()

    func beekon(rowCap: Int = 100_000) -> Beekon {
        Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir.db, provider: provider, clock: clock, rowCap: rowCap))
    }
}
