import BeekonLoopback
import BeekonTestSupport
import Foundation
import Testing
import BeekonTesting

/// On the agent's side: SY-2 (no plain http:// to a non-loopback host, whatever
/// the spelling) and a seeded, bounded fuzz of the `--config` parser through the real
/// binary — every mutated file ends in a clean exit (2 with one line when the file is
/// bad), never a crash. Scale with `BEEKON_FUZZ_SCALE` (or set the count with
/// `BEEKON_FUZZ_CONFIG_ITERATIONS`), reseed with `BEEKON_FUZZ_SEED`; `ConfigFuzzTests` runs
/// the same mutants in volume in-process.
@Suite("Agent hardening: SY-2 and config fuzzing")
struct AgentHardeningTests {
    // MARK: - SY-2

    static let plainHTTPElsewhere = [
        "http://example.com/v1/locations",
        "http://192.168.1.10:8080/v1/locations",
        "http://10.0.0.1/v1/locations",
        "http://[2001:db8::1]/v1/locations",
        "http://localhost.example.com/v1/locations",
        "http://127.0.0.1.nip.io/v1/locations",
        "http://127.0.0.1@example.com/v1/locations",
        "HTTP://EXAMPLE.COM/v1/locations",
        "http://0.0.0.0/v1/locations",
        "ftp://127.0.0.1/v1/locations",
        "file:///etc/passwd",
        "//example.com/v1/locations",
        "example.com/v1/locations",
    ]

    /// `beekon track` refuses the config (exit 2, one line naming the problem) before any
    /// source is opened or a request sent.
    @Test(arguments: plainHTTPElsewhere)
    func plainHTTPToANonLoopbackHostIsRefused(_ url: String) async throws {
        let tmp = TempDir()
        let config = try tmp.write("c.json", #"{"sync":{"url":"\#(url)"}}"#)
        let out = try await AgentProcess.run(
            [
                "track", "--source", "replay:\(Fixtures.visnjanGPX)", "--db", tmp.path("a.sqlite"),
                "--config", config,
            ], timeout: .seconds(60))
        #expect(!out.signalled && out.status == 2, "\(url): exit \(out.status) \(out.stderr)")
        #expect(out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        #expect(!out.stdout.contains { $0.hasPrefix("started session") })
    }

    /// The same for the token endpoint: a refresh over plain http to another host is refused.
    @Test func plainHTTPRefreshURLElsewhereIsRefused() async throws {
        let tmp = TempDir()
        let config = try tmp.write(
            "c.json",
            #"{"sync":{"url":"http://127.0.0.1:9/v1/locations","auth":{"refreshToken":"SECRET-RT-1","refreshUrl":"http://auth.example.com/token"}}}"#
        )
        let out = try await AgentProcess.run(["sync", "--db", tmp.path("a.sqlite"), "--config", config, "--drain-timeout", "1"])
        #expect(!out.signalled && out.status == 2, "exit \(out.status) \(out.stderr)")
        #expect(!out.stderr.contains("SECRET-RT-1"), "the error never echoes a token")
    }

    // MARK: - Config fuzzing

    static let seed = ConfigFuzz.seed
    /// Binary runs are slow (one process each): the sample grows with `BEEKON_FUZZ_SCALE` only
    /// up to 4×; volume is `ConfigFuzzTests`, in-process.
    static let iterations = Int(ProcessInfo.processInfo.environment["BEEKON_FUZZ_CONFIG_ITERATIONS"] ?? "") ?? 48 * min(ConfigFuzz.scale, 4)
    /// Only loopback URLs, which mutations never touch: no request can leave the machine.
    static let base = #"""
        {"preset":"balanced","minTimeBetweenLocationsSeconds":5,"minDistanceBetweenLocationsMeters":10,
         "whenStationary":"pauseWithCheckIns","stationaryRadiusMeters":20,"checkInIntervalSeconds":600,
         "turnThresholdDegrees":30,"turnMinTimeSeconds":5,"maxDeviationMeters":25,"maxIntervalBetweenLocationsSeconds":300,
         "sync":{"url":"http://127.0.0.1:9/v1/locations","headers":{"X-Fleet":"f1"},"intervalSeconds":120,"batchSize":50,
                 "syncThreshold":10,"keepUploadedLocations":true,
                 "auth":{"accessToken":"AT","refreshToken":"RT","expiresAt":1700000000,"strategy":"bearer",
                         "refreshUrl":"http://127.0.0.1:9/oauth/token","refreshPayload":{"grant_type":"refresh_token","refresh_token":"{refreshToken}"},
                         "refreshHeaders":{"X-A":"b"},"refreshBodyFormat":"json","responseMapping":{"accessToken":"data.token","expiresIn":"data.ttl"},
                         "skewMarginSeconds":30}},
         "extras":{"vehicle":"truck-7"},
         "geofences":[{"id":"depot","latitude":52.52,"longitude":13.405,"radiusMeters":150,"notifyOnEntry":true,"notifyOnExit":false}]}
        """#
    /// The same with token values an error message must never echo.
    static let secretBase = base.replacingOccurrences(of: #""AT""#, with: #""SECRET-AT-7""#)
        .replacingOccurrences(of: #""RT""#, with: #""SECRET-RT-7""#)

    /// Edge values every numeric key gets once: huge, tiny, negative, non-integral, overflowing.
    static let edgeNumbers = ["1e300", "1e999", "-1", "0", "0.5", "1e9", "1000000001", "9223372036854775808", "-0", "1e-320"]
    static let numericKeys = [
        "minTimeBetweenLocationsSeconds", "minDistanceBetweenLocationsMeters", "stationaryRadiusMeters",
        "checkInIntervalSeconds", "turnThresholdDegrees", "turnMinTimeSeconds", "maxDeviationMeters",
        "maxIntervalBetweenLocationsSeconds", "intervalSeconds", "batchSize",
        "syncThreshold", "expiresAt", "skewMarginSeconds", "latitude", "longitude", "radiusMeters",
    ]
    static let edgeCount = numericKeys.count * 2

    struct Mutant: Sendable {
        var label: String
        var text: [UInt8]
    }

    /// Mutant `i`: the first `edgeCount` put edge values into one numeric key each, the rest are
    /// seeded random mutations (from `BEEKON_FUZZ_SEED` and `i`) outside the URLs.
    static func mutant(_ i: Int, base: String = AgentHardeningTests.base) -> Mutant {
        let text = Array(base.utf8)
        if i < edgeCount {
            let k = i / 2
            let key = numericKeys[k]
            let value = edgeNumbers[(k + (i % 2) * 5) % edgeNumbers.count]
            return Mutant(label: "\(key)=\(value)", text: replaceNumber(of: key, in: text, with: value) ?? text)
        }
        let protected = ["http://127.0.0.1:9/v1/locations", "http://127.0.0.1:9/oauth/token"].compactMap {
            text.firstRange(of: Array($0.utf8))
        }
        var rng = SeededRandom(seed: seed &* 0x1000_0000_01B3 ^ UInt64(i))
        _ = rng.next()
        var t = text
        var label = "seed \(seed) #\(i):"
        for _ in 0..<Int.random(in: 1...4, using: &rng) where t.count > 2 {
            var at = Int.random(in: 0..<t.count, using: &rng)
            if protected.contains(where: { $0.contains(at) }) || at >= text.count - 2 { at = 1 }
            switch Int.random(in: 0..<9, using: &rng) {
            case 0:
                t[at] = UInt8.random(in: 0x20...0x7E, using: &rng)
                label += " set@\(at)"
            case 1:
                t.remove(at: at)
                label += " del@\(at)"
            case 2:
                t.insert(contentsOf: [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0x00]].randomElement(using: &rng)!, at: at)
                label += " badutf8@\(at)"
            case 3:
                t = Array(t.prefix(at))
                label += " cut@\(at)"
            case 4:
                let depth = [600, 20_000].randomElement(using: &rng)!
                t.insert(contentsOf: Array(repeating: UInt8(ascii: "["), count: depth), at: at)
                label += " nest\(depth)@\(at)"
            case 5:
                t.insert(contentsOf: Array(#""x":"#.utf8) + Array(edgeNumbers.randomElement(using: &rng)!.utf8) + [0x2C], at: 1)
                label += " newkey"
            case 6:
                let key = numericKeys.randomElement(using: &rng)!
                let value = (edgeNumbers + ["\"1\"", "null", "[]", "{}", "true"]).randomElement(using: &rng)!
                if let r = replaceNumber(of: key, in: t, with: value) { t = r }
                label += " \(key)=\(value)"
            case 7:
                let s = [#""\ud800""#, #""\u0000""#, #""a\nb""#, #""""#, #""\#(String(repeating: "x", count: 5_000))""#, #""é""#]
                    .randomElement(using: &rng)!
                // Replaces the next string value (keys and structure stay).
                if let r = t[at...].firstRange(of: Array(#"":""#.utf8)), let end = t[r.upperBound...].firstIndex(of: 0x22) {
                    t.replaceSubrange(r.upperBound - 1...end, with: Array(s.utf8))
                }
                label += " string \(s.prefix(12))@\(at)"
            default:
                let swap = [("true", "\"true\""), ("{", "["), ("50", "\"50\""), ("\"bearer\"", "\"raw\""), (":[", ":{")].randomElement(
                    using: &rng)!
                if let r = t.firstRange(of: Array(swap.0.utf8)) { t.replaceSubrange(r, with: Array(swap.1.utf8)) }
                label += " \(swap.0)→\(swap.1)"
            }
        }
        return Mutant(label: label, text: t)
    }

    static func mutants() -> [Mutant] { (0..<edgeCount + iterations).map { mutant($0) } }

    static func replaceNumber(of key: String, in text: [UInt8], with value: String) -> [UInt8]? {
        guard let k = text.firstRange(of: Array("\"\(key)\":".utf8)) else { return nil }
        var end = k.upperBound
        while end < text.count, "-+.0123456789eE".utf8.contains(text[end]) { end += 1 }
        return Array(text[..<k.upperBound]) + Array(value.utf8) + Array(text[end...])
    }

    /// `beekon sync` applies the whole config (the SDK's `configure`), so a bad value that the
    /// parser let through would surface there; uploads go to a closed loopback port.
    @Test func mutatedConfigFilesExitCleanlyNeverCrash() async throws {
        let tmp = TempDir()
        let all = Self.mutants()
        var outcomes: [Int32: Int] = [:]
        var tally = ConfigFuzz.Tally("config (agent binary)")
        try await withThrowingTaskGroup(of: (Mutant, AgentProcess.Outcome).self) { group in
            var next = 0
            func launch(_ i: Int) throws {
                let m = all[i]
                let config = try tmp.write("c\(i).json", Data(m.text))
                group.addTask {
                    (
                        m,
                        try await AgentProcess.run(
                            [
                                "sync", "--db", tmp.path("a\(i).sqlite"), "--config", config, "--drain-timeout", "1",
                                "--log-level", "critical",
                            ], timeout: .seconds(60))
                    )
                }
            }
            while next < min(3, all.count) {
                try launch(next)
                next += 1
            }
            for try await (m, out) in group {
                outcomes[out.signalled ? -out.status : out.status, default: 0] += 1
                if out.signalled || ![0, 1, 2, 3].contains(out.status) {
                    tally.input(
                        m.label, ["\(out.signalled ? "signal" : "exit") \(out.status): \(out.stderr.suffix(500))"], crashed: out.signalled)
                } else if out.status == 2, out.stderr.split(separator: "\n").count != 1 {
                    tally.input(m.label, ["exit 2 without exactly one line: \(out.stderr)"])
                } else {
                    tally.input(m.label, [])
                }
                if next < all.count {
                    try launch(next)
                    next += 1
                }
            }
        }
        print("config fuzz: \(all.count) files, exit codes \(outcomes.sorted { $0.key < $1.key })")
        tally.finish()
        #expect(outcomes[2, default: 0] > all.count / 3, "most mutants are bad configs: \(outcomes)")
    }
}
