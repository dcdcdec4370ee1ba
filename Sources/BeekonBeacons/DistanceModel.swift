import Foundation

/// Turns a (smoothed) RSSI and the beacon's expected RSSI at 1 m into metres (SPEC BY-5).
public protocol DistanceModel: Sendable {
    /// The estimated distance in metres for `rssi` heard from a beacon whose RSSI at 1 m is `measuredPower` (both dBm).
    func distance(rssi: Double, measuredPower: Double) -> Double
}

/// The curve fit that beacon libraries use, `d = A·(rssi/power)^B + C`, with coefficients
/// fitted per receiving device model; below the 1 m power (`rssi/power < 1`) it uses `(rssi/power)^10`.
public struct CurveFitDistanceModel: DistanceModel, Equatable, Codable {
    /// Coefficient A.
    public var a: Double
    /// Exponent B.
    public var b: Double
    /// Offset C.
    public var c: Double

    /// Creates the model; the defaults are the published Nexus 4/5 fit (A 0.42093, B 6.9476, C 0.54992).
    public init(a: Double = 0.42093, b: Double = 6.9476, c: Double = 0.54992) {
        self.a = a
        self.b = b
        self.c = c
    }

    /// The curve-fit distance; 0 for non-negative powers or RSSI (not a dBm reception).
    public func distance(rssi: Double, measuredPower: Double) -> Double {
        guard rssi < 0, measuredPower < 0 else { return 0 }
        let ratio = rssi / measuredPower
        if ratio < 1 { return pow(ratio, 10) }
        return a * pow(ratio, b) + c
    }
}

/// Log-distance path loss: `d = 10^((power − rssi) / (10·n))`, with `n` 2 in free space and 2–4 indoors.
public struct PathLossDistanceModel: DistanceModel, Equatable, Codable {
    /// The path-loss exponent `n`.
    public var exponent: Double

    /// Creates the model (default exponent 2).
    public init(exponent: Double = 2) {
        self.exponent = exponent
    }

    /// The path-loss distance.
    public func distance(rssi: Double, measuredPower: Double) -> Double {
        pow(10, (measuredPower - rssi) / (10 * max(exponent, 0.1)))
    }
}
