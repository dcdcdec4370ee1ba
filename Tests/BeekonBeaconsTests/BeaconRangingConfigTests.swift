import Foundation
import Testing
@testable import BeekonBeacons

/// The `--beacons CONFIG` file (SPEC BY-5).
@Suite struct BeaconRangingConfigTests {
    @Test("BY-5: regions, distances, smoothing and model are read; per-region distances override")
    func parses() throws {
        let json = """
            {"regions": [{"identifier": "pump-4", "uuid": "e2c56db5dffb48d2b060d0f5a71096e0", "major": 4},
                         {"uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "minor": 9, "enterDistance": 0.5, "exitDistance": 1.5}],
             "enterDistance": 2, "exitDistance": 4, "dwell": 5, "silenceTimeout": 20,
             "smoothing": {"window": 8, "trim": 0.1, "minimumSamples": 3},
             "model": {"kind": "path-loss", "exponent": 2.5}}
            """
        let c = try BeaconRangingConfig.parse(Data(json.utf8))
        #expect(c.regions.map(\.identifier) == ["pump-4", "region-2"])
        #expect(c.regions[0].uuid == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" && c.regions[0].major == 4 && c.regions[0].rule == nil)
        #expect(c.regions[1].rule == ProximityRule(enterDistance: 0.5, exitDistance: 1.5, dwell: 5, silenceTimeout: 20))
        #expect(c.rule == ProximityRule(enterDistance: 2, exitDistance: 4, dwell: 5, silenceTimeout: 20))
        #expect(c.smoother == RSSISmoother(window: 8, trimFraction: 0.1, minimumSamples: 3))
        #expect(c.model == .pathLoss(PathLossDistanceModel(exponent: 2.5)))
        #expect(try BeaconRangingConfig.parse(Data("{}".utf8)) == BeaconRangingConfig())
    }

    @Test(
        "BY-5: a bad file is refused with one line naming the key",
        arguments: [
            (#"{"enterDistanse": 1}"#, "beacons config: unknown key 'enterDistanse'"),
            (#"{"enterDistance": 3, "exitDistance": 2}"#, "beacons config: exitDistance must be larger than enterDistance"),
            (#"{"regions": [{"uuid": "nope"}]}"#, "beacons config: regions[0].uuid is not 32 hex digits"),
            (#"{"model": {"kind": "magic"}}"#, "beacons config: unknown model kind 'magic' (curve-fit, path-loss)"),
            (#"{"smoothing": {"trim": 0.9}}"#, "beacons config: smoothing.trim must be a number in 0.0…0.45"),
            ("[1, 2]", "beacons config: not a JSON object"),
        ])
    func refuses(_ json: String, _ message: String) {
        #expect(throws: BeaconRangingConfig.Problem.self) { try BeaconRangingConfig.parse(Data(json.utf8)) }
        do { _ = try BeaconRangingConfig.parse(Data(json.utf8)) } catch {
            #expect(error.description == message)
        }
    }
}
