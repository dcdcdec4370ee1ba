import Foundation

/// What to range and how (SPEC BY-5), as the agent's `--beacons CONFIG` JSON file holds it:
///
/// ```json
/// {"regions": [{"identifier": "pump-4", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "major": 4}],
///  "enterDistance": 1, "exitDistance": 2, "dwell": 3, "silenceTimeout": 30,
///  "smoothing": {"window": 10, "trim": 0.2, "minimumSamples": 5},
///  "model": {"kind": "curve-fit", "a": 0.42093, "b": 6.9476, "c": 0.54992}}
/// ```
/// Every key is optional; `model` may also be `{"kind": "path-loss", "exponent": 2.5}`.
public struct BeaconRangingConfig: Sendable, Equatable {
    /// The regions (empty: every beacon).
    public var regions: [BeaconRegion] = []
    /// The default rule.
    public var rule = ProximityRule()
    /// The smoothing every beacon starts with.
    public var smoother = RSSISmoother()
    /// The distance model.
    public var model: Model = .curveFit(CurveFitDistanceModel())

    /// A distance model chosen by configuration.
    public enum Model: Sendable, Equatable {
        /// ``CurveFitDistanceModel``.
        case curveFit(CurveFitDistanceModel)
        /// ``PathLossDistanceModel``.
        case pathLoss(PathLossDistanceModel)

        /// The model itself.
        public var distanceModel: any DistanceModel {
            switch self {
            case let .curveFit(m): return m
            case let .pathLoss(m): return m
            }
        }
    }

    /// The defaults.
    public init() {}

    /// A tracker for this configuration.
    public func makeTracker() -> ProximityTracker {
        ProximityTracker(regions: regions, rule: rule, model: model.distanceModel, smoother: smoother)
    }

    /// Why a configuration file was refused: one line.
    public struct Problem: Error, Sendable, CustomStringConvertible {
        /// The message.
        public var description: String
    }

    /// Parses the JSON form; unknown keys are refused so that a typo is not silently ignored.
    public static func parse(_ data: Data) throws(Problem) -> BeaconRangingConfig {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw Problem(description: "beacons config: not a JSON object")
        }
        var config = BeaconRangingConfig()
        try check(object, allowed: ["regions", "enterDistance", "exitDistance", "dwell", "silenceTimeout", "smoothing", "model"], in: "")
        let enter = try number(object, "enterDistance", in: "", range: 0.01...1_000) ?? config.rule.enterDistance
        let exit = try number(object, "exitDistance", in: "", range: 0.01...1_000) ?? max(config.rule.exitDistance, enter * 2)
        guard exit > enter else { throw Problem(description: "beacons config: exitDistance must be larger than enterDistance") }
        config.rule = ProximityRule(
            enterDistance: enter, exitDistance: exit,
            dwell: try number(object, "dwell", in: "", range: 0...3_600) ?? config.rule.dwell,
            silenceTimeout: try number(object, "silenceTimeout", in: "", range: 1...86_400) ?? config.rule.silenceTimeout)
        if let s = object["smoothing"] {
            guard let s = s as? [String: Any] else { throw Problem(description: "beacons config: smoothing must be an object") }
            try check(s, allowed: ["window", "trim", "minimumSamples"], in: "smoothing.")
            config.smoother = RSSISmoother(
                window: try number(s, "window", in: "smoothing.", range: 0.1...3_600) ?? 10,
                trimFraction: try number(s, "trim", in: "smoothing.", range: 0...0.45) ?? 0.2,
                minimumSamples: Int(try number(s, "minimumSamples", in: "smoothing.", range: 1...10_000) ?? 5))
        }
        if let m = object["model"] { config.model = try model(m) }
        if let r = object["regions"] {
            guard let list = r as? [[String: Any]] else {
                throw Problem(description: "beacons config: regions must be an array of objects")
            }
            config.regions = try list.enumerated().map { (i, item) throws(Problem) in try region(item, index: i, rule: config.rule) }
        }
        return config
    }

    private static func model(_ value: Any) throws(Problem) -> Model {
        guard let m = value as? [String: Any], let kind = m["kind"] as? String else {
            throw Problem(description: "beacons config: model must be an object with a kind (curve-fit, path-loss)")
        }
        switch kind {
        case "curve-fit":
            try check(m, allowed: ["kind", "a", "b", "c"], in: "model.")
            let d = CurveFitDistanceModel()
            return .curveFit(
                CurveFitDistanceModel(
                    a: try number(m, "a", in: "model.", range: 1e-6...1e6) ?? d.a,
                    b: try number(m, "b", in: "model.", range: 0.01...100) ?? d.b,
                    c: try number(m, "c", in: "model.", range: -100...100) ?? d.c))
        case "path-loss":
            try check(m, allowed: ["kind", "exponent"], in: "model.")
            return .pathLoss(PathLossDistanceModel(exponent: try number(m, "exponent", in: "model.", range: 0.5...10) ?? 2))
        default:
            throw Problem(description: "beacons config: unknown model kind '\(kind)' (curve-fit, path-loss)")
        }
    }

    private static func region(_ item: [String: Any], index: Int, rule: ProximityRule) throws(Problem) -> BeaconRegion {
        let at = "regions[\(index)]."
        try check(item, allowed: ["identifier", "uuid", "major", "minor", "enterDistance", "exitDistance"], in: at)
        let uuid = item["uuid"] as? String
        if item["uuid"] != nil, uuid == nil { throw Problem(description: "beacons config: \(at)uuid must be a string") }
        let major = try number(item, "major", in: at, range: 0...65_535).map { Int($0) }
        let minor = try number(item, "minor", in: at, range: 0...65_535).map { Int($0) }
        var own: ProximityRule?
        if item["enterDistance"] != nil || item["exitDistance"] != nil {
            let enter = try number(item, "enterDistance", in: at, range: 0.01...1_000) ?? rule.enterDistance
            let exit = try number(item, "exitDistance", in: at, range: 0.01...1_000) ?? max(rule.exitDistance, enter * 2)
            guard exit > enter else { throw Problem(description: "beacons config: \(at)exitDistance must be larger than enterDistance") }
            own = ProximityRule(enterDistance: enter, exitDistance: exit, dwell: rule.dwell, silenceTimeout: rule.silenceTimeout)
        }
        guard
            let region = BeaconRegion(
                identifier: item["identifier"] as? String ?? "region-\(index + 1)", uuid: uuid,
                major: major, minor: minor, rule: own)
        else {
            throw Problem(description: "beacons config: \(at)uuid is not 32 hex digits")
        }
        return region
    }

    private static func check(_ object: [String: Any], allowed: Set<String>, in path: String) throws(Problem) {
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw Problem(description: "beacons config: unknown key '\(path)\(unknown)'")
        }
    }

    private static func number(_ object: [String: Any], _ key: String, in path: String, range: ClosedRange<Double>) throws(Problem)
        -> Double?
    {
        guard let value = object[key] else { return nil }
        guard let n = value as? NSNumber, type(of: value) != Bool.self, range.contains(n.doubleValue) else {
            throw Problem(description: "beacons config: \(path)\(key) must be a number in \(range.lowerBound)…\(range.upperBound)")
        }
        return n.doubleValue
    }
}
