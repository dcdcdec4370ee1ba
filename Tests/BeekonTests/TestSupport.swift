import Beekon
import BeekonTestSupport
import BeekonTesting
import Foundation

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
