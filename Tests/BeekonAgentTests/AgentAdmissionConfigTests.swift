import Beekon
import Foundation
import Testing
@testable import BeekonAgent

/// BY-9 in the agent's `--config` JSON: the keys of the README table, and one-line errors.
@Suite("Agent config: error-bounded admission keys (BY-9)")
struct AgentAdmissionConfigTests {
    @Test func theKeysReachTheSDKConfig() throws {
        let config = try AgentConfig.parse(
            Data(#"{"preset":"precision","maxDeviationMeters":25,"maxIntervalBetweenLocationsSeconds":120}"#.utf8))
        #expect(config.sdk.maxDeviationMeters == 25)
        #expect(config.sdk.maxIntervalBetweenLocationsSeconds == 120)
        #expect(config.sdk == BeekonConfig.faithful(maxDeviationMeters: 25, maxIntervalSeconds: 120))
    }

    @Test(arguments: [#"{"maxDeviationMeters":0}"#, #"{"maxDeviationMeters":"25"}"#, #"{"maxIntervalBetweenLocationsSeconds":0.5}"#])
    func badValuesAreOneLineErrors(text: String) {
        do {
            _ = try AgentConfig.parse(Data(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(!error.description.isEmpty && !error.description.contains("\n"))
            #expect(error.description.contains("maxDeviationMeters") || error.description.contains("maxIntervalBetweenLocationsSeconds"))
        }
    }
}
