import Foundation
import Testing
import BeekonTesting

/// The knobs every fuzzer of this module shares (`scripts/fuzz.sh` sets them):
/// `BEEKON_FUZZ_SCALE` multiplies the input counts (default 1, the size `swift test` runs),
/// `BEEKON_FUZZ_SEED` reseeds (default 8), `BEEKON_FUZZ_REPORT` names a file that gets one
/// JSON line when a fuzzer starts and one with its counts when it ends.
enum Fuzz {
    static let env = ProcessInfo.processInfo.environment
    static let scale = max(1, Int(env["BEEKON_FUZZ_SCALE"] ?? "") ?? 1)
    static let seed = UInt64(env["BEEKON_FUZZ_SEED"] ?? "") ?? 8
    /// Whole mutated files cost 0.1–0.2 s each: they grow with the scale only up to 5×.
    static let fileScale = min(scale, 5)

    /// The generator of input `index` of the fuzzer `stream`: any single input can be replayed.
    static func rng(_ stream: UInt64, _ index: Int) -> SeededRandom {
        var g = SeededRandom(seed: seed &* 0x1000_0000_01B3 ^ stream &* 0x9E37_79B9 ^ UInt64(index))
        _ = g.next()
        return g
    }
}

/// What one fuzzer ran and found. Failures are counted per input; the first ten are recorded as issues.
struct FuzzTally {
    let name: String
    var inputs = 0, failures = 0
    private var examples: [String] = []
    private let start = ContinuousClock.now

    init(_ name: String) {
        self.name = name
        Self.append(#"{"name":"\#(name)","started":true}"#)
    }

    /// Counts one input; `problems` are what it violated (empty: all good).
    mutating func input(_ label: @autoclosure () -> String, _ problems: [String]) {
        inputs += 1
        guard !problems.isEmpty else { return }
        failures += 1
        if examples.count < 10 { examples.append("seed \(Fuzz.seed) \(label()): \(problems.joined(separator: "; "))") }
    }

    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        let d = (ContinuousClock.now - start).components
        let seconds = Double(d.seconds) + Double(d.attoseconds) / 1e18
        Self.append(
            #"{"name":"\#(name)","seed":\#(Fuzz.seed),"scale":\#(Fuzz.scale),"inputs":\#(inputs),"crashes":0,"failures":\#(failures),"seconds":\#(String(format: "%.2f", seconds))}"#
        )
        for e in examples { Issue.record("\(name): \(e)", sourceLocation: sourceLocation) }
        if failures > examples.count {
            Issue.record("\(name): \(failures - examples.count) more failing inputs", sourceLocation: sourceLocation)
        }
    }

    /// One whole line per `write` with O_APPEND, so parallel fuzzers never interleave.
    private static func append(_ line: String) {
        guard let path = Fuzz.env["BEEKON_FUZZ_REPORT"] else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard fd >= 0 else { return }
        _ = Array((line + "\n").utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}
