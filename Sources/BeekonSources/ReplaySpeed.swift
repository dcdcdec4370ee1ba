import Foundation

/// How fast a replay delivers its fixes (SRC-4).
public enum ReplaySpeed: Sendable, Hashable, CustomStringConvertible {
    /// The recorded gaps between fixes, in real time.
    case realTime
    /// The recorded gaps divided by the factor (`multiplier(10)` is ten times faster).
    /// A factor that is not a positive finite number means `asFastAsPossible`.
    case multiplier(Double)
    /// No waiting: each fix as soon as the consumer asks for it; the replay clock still follows the fixes.
    case asFastAsPossible

    /// Parses a command-line value: `max` (or `fast`, `asap`) → `asFastAsPossible`;
    /// `1`/`1x`/`realtime` → `realTime`; a positive number with optional `x` → `multiplier`.
    public init?(argument: String) {
        var text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        switch text {
        case "max", "fast", "asap":
            self = .asFastAsPossible
            return
        case "realtime", "real-time", "real":
            self = .realTime
            return
        default: break
        }
        if text.hasSuffix("x") || text.hasSuffix("×") { text.removeLast() }
        guard let v = Double(text), v.isFinite, v > 0 else { return nil }
        self = v == 1 ? .realTime : .multiplier(v)
    }

    /// Real seconds per recorded second's inverse (1 for real time), nil for no pacing.
    var rate: Double? {
        switch self {
        case .realTime: return 1
        case .multiplier(let m): return m.isFinite && m > 0 ? m : nil
        case .asFastAsPossible: return nil
        }
    }

    /// `real time`, `10×`, `max`.
    public var description: String {
        switch self {
        case .realTime: return "real time"
        case .multiplier(let m): return "\(m)×"
        case .asFastAsPossible: return "max"
        }
    }
}
