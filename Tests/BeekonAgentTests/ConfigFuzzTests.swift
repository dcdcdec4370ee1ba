import BeekonTestSupport
import Beekon
import Foundation
import Testing
@testable import BeekonAgent

/// The `--config` parser in volume, in-process: the same mutants as the binary sample in
/// `AgentHardeningTests` (`600 × BEEKON_FUZZ_SCALE`, from `BEEKON_FUZZ_SEED`). A mutant is
/// either refused with one line that names no token value, or it parses into a config the
/// SDK accepts as it is.
@Suite("Config fuzzing in-process", .tags(.fuzz), .skippable(.fuzz))
struct ConfigFuzzTests {
    static let inputs = 600 * ConfigFuzz.scale
    static let tokens = ["SECRET-AT-7", "SECRET-RT-7"]

    /// What is wrong with the parser's answer to `text` (nothing: fine), and whether it parsed.
    static func problems(_ text: [UInt8]) -> [String] { check(text).problems }

    static func check(_ text: [UInt8]) -> (parsed: Bool, problems: [String]) {
        do {
            let config = try AgentConfig.parse(Data(text))
            var problems: [String] = []
            do { try config.sdk.validate() } catch { problems.append("parsed but invalid: \(error.description)") }
            for fence in config.geofences ?? [] {
                do { try fence.validate() } catch { problems.append("parsed an invalid fence: \(error.description)") }
            }
            return (true, problems)
        } catch {
            let line = error.description
            if line.isEmpty || line.contains(where: \.isNewline) { return (false, ["error is not one line: \(line.debugDescription)"]) }
            if let t = tokens.first(where: { line.contains($0) }) { return (false, ["error echoes the token \(t): \(line)"]) }
            return (false, [])
        }
    }

    @Test func mutatedConfigsParseOrFailWithOneLine() async {
        await OffPoolExecutor.run("config fuzz: mutatedConfigsParseOrFailWithOneLine") {
            var tally = ConfigFuzz.Tally("config parser (in-process)")
            var parsed = 0
            for i in 0..<Self.inputs {
                let m = AgentHardeningTests.mutant(i, base: AgentHardeningTests.secretBase)
                let (ok, problems) = Self.check(m.text)
                if ok { parsed += 1 }
                tally.input(m.label, problems)
            }
            tally.finish()
            #expect(parsed > 0 && parsed < Self.inputs / 2, "most mutants are refused, some still parse: \(parsed) of \(Self.inputs)")
        }
    }

    /// Inputs on an edge of the parser: whole-number limits, denormals, NUL, cut files; and the
    /// shapes the fuzzer found at scale 100 (seed 8 #27050, #35289, #51419, #59535): a key or a
    /// geofence id holding an escaped line break was echoed into a two-line error.
    @Test(arguments: [
        #"{"minDist\nceBetweenLocationsMeters":10}"#,
        #"{"geofences":[{"id":"depot","latitude":52.52,"longitude":13.405,"radiusMeters":150,"notify\nEntry":true}]}"#,
        #"{"geofences":[{"id":"a\nb","latitude":52.52,"longitude":13.405,"radiusMeters":0}]}"#,
        #"{"geofences":[{"id":"a\u2028b\u000bc","latitude":52.52,"longitude":13.405,"radiusMeters":-0}]}"#,
        #"{"sync":{"url":"http://127.0.0.1:9/v1/locations","batchSize":1e9}}"#,
        #"{"sync":{"url":"http://127.0.0.1:9/v1/locations","batchSize":1000000001}}"#,
        #"{"stationaryRadiusMeters":1e-320}"#,
        #"{"geofences":[{"id":"a","latitude":91,"longitude":0,"radiusMeters":10}]}"#,
        "{\"preset\":\"bal\u{0}anced\"}",
        #"{"a":"#,
        "[",
        "",
    ])
    func edgeConfig(_ text: String) {
        #expect(Self.problems(Array(text.utf8)).isEmpty)
    }
}

/// The fuzz knobs of this module (see `scripts/fuzz.sh`): `BEEKON_FUZZ_SCALE` (default 1),
/// `BEEKON_FUZZ_SEED` (default 8), and `BEEKON_FUZZ_REPORT`, a file that gets a JSON line
/// when a fuzzer starts and one with its counts when it ends.
enum ConfigFuzz {
    static let env = ProcessInfo.processInfo.environment
    static let scale = max(1, Int(env["BEEKON_FUZZ_SCALE"] ?? "") ?? 1)
    static let seed = UInt64(env["BEEKON_FUZZ_SEED"] ?? "") ?? 8

    struct Tally {
        let name: String
        var inputs = 0, crashes = 0, failures = 0
        var examples: [String] = []
        let start = ContinuousClock.now

        init(_ name: String) {
            self.name = name
            ConfigFuzz.report(["name": "\"\(name)\"", "started": "true"])
        }

        /// One input and what it violated (nothing: fine); `crashed` counts it as a crash too.
        mutating func input(_ label: String, _ problems: [String], crashed: Bool = false) {
            inputs += 1
            if crashed { crashes += 1 }
            guard !problems.isEmpty else { return }
            failures += 1
            if examples.count < 10 { examples.append("seed \(ConfigFuzz.seed) \(label): \(problems.joined(separator: "; "))") }
        }

        func finish(sourceLocation: SourceLocation = #_sourceLocation) {
            let elapsed = (ContinuousClock.now - start).components
            ConfigFuzz.report([
                "name": "\"\(name)\"", "seed": "\(seed)", "scale": "\(scale)", "inputs": "\(inputs)", "crashes": "\(crashes)",
                "failures": "\(failures)", "seconds": String(format: "%.2f", Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18),
            ])
            for e in examples { Issue.record("\(name): \(e)", sourceLocation: sourceLocation) }
            if failures > examples.count { Issue.record("\(name): and \(failures - examples.count) more", sourceLocation: sourceLocation) }
        }
    }

    /// Appends one line in one O_APPEND write, so fuzzers running in parallel never interleave.
    static func report(_ fields: KeyValuePairs<String, String>) {
        guard let path = env["BEEKON_FUZZ_REPORT"] else { return }
        let line = "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}\n"
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = Array(line.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
