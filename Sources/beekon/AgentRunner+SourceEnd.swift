import Beekon
import Foundation

extension AgentRunner {
    /// The SDK state to judge a source end by. When a live source gave up, the SDK may
    /// wake `waitUntilSourceEnds()` a moment before it publishes `stopped(…)`; this waits
    /// (at most 10 s) for that state so a failure is never mistaken for a normal end.
    func stateAfterSourceEnd() async -> BeekonState {
        let now = beekon.currentState
        guard sourceFailure() != nil, case .tracking = now else { return now }
        let states = beekon.state
        return await withTaskGroup(of: BeekonState?.self) { group in
            group.addTask {
                for await s in states { if case .stopped = s { return s } }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10)) // a bound, not synchronisation
                return nil
            }
            defer { group.cancelAll() }
            let first = await group.next() ?? nil
            return first ?? .stopped(.locationServicesDisabled)
        }
    }
}
