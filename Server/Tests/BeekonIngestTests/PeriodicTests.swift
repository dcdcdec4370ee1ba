import BeekonPrimitives
import Testing

@testable import BeekonIngest

/// The cadence every maintenance service runs on (`Periodic`): a pass after each wait, none once
/// the service is stopping, and a pass cut by the stop is not logged as a failure.
@Suite struct PeriodicTests {
    @Test func aPassFollowsEachWaitAndAWaitTheServiceIsStoppedInStartsNone() async {
        let waits = Locked<[Duration]>([])
        let passes = Locked(0)
        // The third wait is where the server stops: it cancels the task it runs in.
        let sleep: Sleeper = { duration in
            let count = waits.withLock { w -> Int in
                w.append(duration)
                return w.count
            }
            if count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
        }
        let cadence = Periodic(interval: .seconds(600), ready: nil, sleep: sleep)
        await Task { await cadence.run { passes.withLock { $0 += 1 } } }.value
        #expect(waits.value == [.seconds(600), .seconds(600), .seconds(600)])
        #expect(passes.value == 2)
    }

    @Test func aFailureIsLoggedUnlessTheServiceIsStopping() async {
        let log = LogCapture()
        Periodic.logFailure("event retention", StoreError.unavailable("disk"), logger: log.logger)
        await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            Periodic.logFailure("locate expiry", CancellationError(), logger: log.logger)
        }.value
        #expect(log.lines.count == 1)
        #expect(log.lines.first?.hasPrefix("warning event retention failed") == true)
    }
}
