import BeekonGzip
@testable import BeekonIngest
import BeekonPrimitives
import BeekonWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import BeekonTesting

/// Issue 8: seeded, bounded fuzzing of the ingest endpoint. Every input is derived from
/// `BEEKON_FUZZ_SEED` (default 8) and its index, so a failure names the seed and index
/// that reproduce it. Every answer must be 200/400/413/415/422 — never a 500 (or any other
/// status) for bad input — and every refusal carries a one-line JSON error. Volume goes
/// in-process: through the whole Hummingbird app with HummingbirdTesting's `.router` mode
/// (no sockets), and through `Gzip.inflate` + `WireEnvelope.decode`; a smaller sample goes
/// over real HTTP on loopback. `BEEKON_FUZZ_SCALE` multiplies the counts (the HTTP sample
/// only up to 2×; `BEEKON_FUZZ_ITERATIONS` / `BEEKON_FUZZ_DECODE_ITERATIONS` /
/// `BEEKON_FUZZ_ROUTER_ITERATIONS` set them outright); `BEEKON_FUZZ_REPORT` gets one JSON
/// line per fuzzer (see `scripts/fuzz.sh`).
@Suite("Ingest fuzzing", .serialized, .tags(.fuzz), .skippable(.fuzz))
struct IngestFuzzTests {
    static let env = ProcessInfo.processInfo.environment
    static let seed = UInt64(env["BEEKON_FUZZ_SEED"] ?? "") ?? 8
    static let scale = max(1, Int(env["BEEKON_FUZZ_SCALE"] ?? "") ?? 1)
    static let httpIterations = Int(env["BEEKON_FUZZ_ITERATIONS"] ?? "") ?? 1_500 * min(scale, 2)
    static let decodeIterations = Int(env["BEEKON_FUZZ_DECODE_ITERATIONS"] ?? "") ?? 3_000 * scale
    static let routerIterations = Int(env["BEEKON_FUZZ_ROUTER_ITERATIONS"] ?? "") ?? 3_000 * scale
    /// 409: a mutated body that keeps a stored batch_id with other fixes is a batch conflict (issue 28).
    static let allowed: Set<Int> = [200, 400, 409, 413, 415, 422]

    /// What is wrong with one answer to a fuzz input (nothing: fine).
    static func problems(status: Int, body: [UInt8]) -> [String] {
        guard allowed.contains(status) else { return ["status \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"] }
        guard let o = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            return ["\(status) without a JSON object body"]
        }
        if status == 200 { return o["locations_stored"] is Int ? [] : ["200 without the stored counts: \(o)"] }
        guard let code = o["error"] as? String, let message = o["message"] as? String, !code.isEmpty, !message.isEmpty else {
            return ["\(status) without error and message: \(o)"]
        }
        return message.contains(where: \.isNewline) ? ["\(status) message is not one line: \(message.debugDescription)"] : []
    }

    static func label(_ i: Int, _ input: FuzzInput) -> String {
        "index \(i) (\(input.kind)); body \(input.body.prefix(64).map { String(format: "%02x", $0) }.joined())"
    }

    @Test func ingestEndpointNeverAnswers500ToBadInput() async throws {
        try await withServer(.sqlite, configure: { $0.maxDecompressedBytes = 4 << 20 }) { server, _ in
            let tally = Locked(IngestFuzzTally("ingest over HTTP (loopback)"))
            let statuses = Locked<[Int: Int]>([:])
            let workers = 4
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<workers {
                    group.addTask {
                        for i in stride(from: w, to: Self.httpIterations, by: workers) {
                            let input = FuzzInput.make(seed: Self.seed, index: UInt64(i))
                            let r = try await HTTP.send("POST", server.base + "/v1/locations", body: input.body, headers: input.headers)
                            statuses.withLock { $0[r.status, default: 0] += 1 }
                            let problems = Self.problems(status: r.status, body: r.body)
                            tally.withLock { $0.input(Self.label(i, input), problems) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let seen = statuses.withLock { $0 }
            print("ingest fuzz: \(Self.httpIterations) requests, statuses \(seen.sorted { $0.key < $1.key })")
            tally.withLock { $0.finish() }
            #expect(
                seen[200, default: 0] > 0 && seen[400, default: 0] > 0 && seen[422, default: 0] > 0,
                "the fuzzer reaches every outcome: \(seen)")
            #expect(try await HTTP.send("GET", server.base + "/healthz").status == 200)
            #expect(try await HTTP.upload(server, Fixtures.envelope(Fixtures.locations(3))).status == 200, "still ingesting")
        }
    }

    /// The same inputs in volume through the whole application in-process (router, auth,
    /// body caps, gunzip, decode, SQLite store), two requests at a time.
    @Test func ingestEndpointInProcessInVolume() async throws {
        let db = try await Backend.sqlite.freshDatabase()
        defer { db.remove() }
        var config = IngestConfiguration(database: db.location, authMode: .off, databaseTimeoutSeconds: testDatabaseTimeout)
        config.maxDecompressedBytes = 4 << 20
        let app = try IngestServer.buildApplication(config, logger: testLogger)
        let tally = Locked(IngestFuzzTally("ingest in-process (router)"))
        let statuses = Locked<[Int: Int]>([:])
        // On a thread of its own (the router runs in the calling task): two workers on the
        // cooperative pool were the whole pool of a 2-core machine for the run.
        try await OffPoolExecutor.run("ingest router fuzz") {
            try await Self.routerFuzz(app, tally: tally, statuses: statuses)
        }
        let seen = statuses.withLock { $0 }
        print("ingest router fuzz: \(Self.routerIterations) requests, statuses \(seen.sorted { $0.key < $1.key })")
        tally.withLock { $0.finish() }
        #expect(
            seen[200, default: 0] > 0 && seen[400, default: 0] > 0 && seen[422, default: 0] > 0,
            "the fuzzer reaches every outcome: \(seen)")
    }

    /// The in-process fuzzer's requests, two at a time, and the checks that the app still ingests.
    static func routerFuzz(
        _ app: some ApplicationProtocol, tally: Locked<IngestFuzzTally>, statuses: Locked<[Int: Int]>
    ) async throws {
        try await app.test(.router) { client in
            let workers = 2
            try await withThrowingTaskGroup(of: Void.self) { group in
                for w in 0..<workers {
                    group.addTask {
                        for i in stride(from: w, to: Self.routerIterations, by: workers) {
                            let input = FuzzInput.make(seed: Self.seed &+ 2, index: UInt64(i))
                            let r = try await client.execute(
                                uri: "/v1/locations", method: .post, headers: input.httpFields,
                                body: ByteBuffer(bytes: input.body))
                            let status = Int(r.status.code)
                            statuses.withLock { $0[status, default: 0] += 1 }
                            let problems = Self.problems(status: status, body: Array(buffer: r.body))
                            tally.withLock { $0.input(Self.label(i, input), problems) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let ok = try await client.execute(
                uri: "/v1/locations", method: .post, headers: FuzzInput.regressions[0].httpFields,
                body: ByteBuffer(bytes: Gzip.deflate([UInt8](WireJSONWriter.encode(Fixtures.envelope(Fixtures.locations(3)))))))
            #expect(ok.status == .ok, "still ingesting")
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
        }
    }

    /// The same generator in volume, just the decoding: inflate + decode never crash or hang,
    /// every error is one line, and every envelope that decodes holds only sane values.
    /// Pure CPU work, so it runs on a thread of its own, off the cooperative pool.
    /// The checks run back on the test's task, where `#expect` knows its test.
    @Test func decoderSurvivesMutatedBodiesInVolume() async throws {
        let (outcomes, tally) = await blocking { Self.decodeFuzz() }
        print("decode fuzz: \(Self.decodeIterations) inputs: \(outcomes.sorted { $0.key < $1.key })")
        tally.finish()
        #expect(outcomes["ok", default: 0] > 0 && outcomes["malformed", default: 0] > 0 && outcomes["invalid", default: 0] > 0)
    }

    /// Inflates and decodes every generated body: the outcomes counted, the problems tallied.
    static func decodeFuzz() -> (outcomes: [String: Int], tally: IngestFuzzTally) {
        var outcomes: [String: Int] = [:]
        var tally = IngestFuzzTally("ingest decoder (gunzip + decode)")
        for i in 0..<Self.decodeIterations {
            let input = FuzzInput.make(seed: Self.seed &+ 1, index: UInt64(i))
            var bytes = input.body
            if input.headers["Content-Encoding"] == "gzip" {
                do { bytes = try Gzip.inflate(bytes, limit: 4 << 20) } catch {
                    outcomes["gzip \(error.description.prefix(20))", default: 0] += 1
                    tally.input(Self.label(i, input), error.description.contains(where: \.isNewline) ? ["gzip error is not one line"] : [])
                    continue
                }
            }
            do {
                let e = try WireEnvelope.decode(Data(bytes))
                outcomes["ok", default: 0] += 1
                let insane = e.locations.filter { l in
                    !(-90...90).contains(l.latitude) || !(-180...180).contains(l.longitude)
                        || ![l.accuracy, l.speed, l.bearing, l.altitude].allSatisfy { $0?.isFinite ?? true }
                }
                tally.input(Self.label(i, input), insane.isEmpty ? [] : ["decoded \(insane.count) insane locations"])
            } catch {
                switch error {
                case .malformed: outcomes["malformed", default: 0] += 1
                case .invalid: outcomes["invalid", default: 0] += 1
                case .unsupportedSchemaVersion: outcomes["schema", default: 0] += 1
                }
                tally.input(Self.label(i, input), error.description.contains(where: \.isNewline) ? ["decode error is not one line"] : [])
            }
        }
        return (outcomes, tally)
    }

    /// Regression inputs found or suspected while fuzzing, each over HTTP.
    @Test(arguments: FuzzInput.regressions)
    func regressionInput(_ input: FuzzInput) async throws {
        try await withServer(.sqlite) { server, _ in
            let r = try await HTTP.send("POST", server.base + "/v1/locations", body: input.body, headers: input.headers)
            #expect(Self.problems(status: r.status, body: r.body).isEmpty, "\(input.kind): \(r.status) \(r.text.prefix(300))")
            #expect(try await HTTP.send("GET", server.base + "/healthz").status == 200)
        }
    }
}

/// What one ingest fuzzer ran and found: a JSON line to `BEEKON_FUZZ_REPORT` when it starts
/// and when it ends, and the first ten failing inputs as issues.
struct IngestFuzzTally: Sendable {
    let name: String
    private(set) var inputs = 0, failures = 0
    private var examples: [String] = []
    private let start = ContinuousClock.now

    init(_ name: String) {
        self.name = name
        Self.append(#"{"name":"\#(name)","started":true}"#)
    }

    mutating func input(_ label: @autoclosure () -> String, _ problems: [String]) {
        inputs += 1
        if problems.isEmpty { return }
        failures += 1
        if examples.count < 10 { examples.append("seed \(IngestFuzzTests.seed) \(label()): \(problems.joined(separator: "; "))") }
    }

    func finish(sourceLocation: SourceLocation = #_sourceLocation) {
        let t = (ContinuousClock.now - start).components
        let seconds = String(format: "%.2f", Double(t.seconds) + Double(t.attoseconds) * 1e-18)
        Self.append(
            #"{"name":"\#(name)","seed":\#(IngestFuzzTests.seed),"scale":\#(IngestFuzzTests.scale),"inputs":\#(inputs),"crashes":0,"failures":\#(failures),"seconds":\#(seconds)}"#
        )
        examples.forEach { Issue.record("\(name): \($0)", sourceLocation: sourceLocation) }
        if failures > examples.count {
            Issue.record("\(name): \(failures - examples.count) more failing inputs", sourceLocation: sourceLocation)
        }
    }

    private static func append(_ line: String) {
        guard let path = IngestFuzzTests.env["BEEKON_FUZZ_REPORT"] else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if fd < 0 { return }
        defer { close(fd) }
        _ = Array((line + "\n").utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

// MARK: - Generator

/// A JSON tree that can hold number literals verbatim (1e999, -0, 40-digit integers).
indirect enum FuzzJSON: Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string([UInt8])
    case array([FuzzJSON])
    case object([([UInt8], FuzzJSON)])

    /// Parses JSON text (strictly: true/false only as booleans, integers kept integral).
    static func parse(_ bytes: [UInt8]) -> FuzzJSON { (try? JSONDecoder().decode(Node.self, from: Data(bytes)))?.value ?? .null }

    private struct Node: Decodable {
        var value: FuzzJSON
        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        init(from decoder: any Decoder) throws {
            if let o = try? decoder.container(keyedBy: Key.self) {
                value = .object(
                    try o.allKeys.map(\.stringValue).sorted().map {
                        (Array($0.utf8), try o.decode(Node.self, forKey: Key(stringValue: $0)).value)
                    })
                return
            }
            if var a = try? decoder.unkeyedContainer() {
                var items: [FuzzJSON] = []
                while !a.isAtEnd { items.append(try a.decode(Node.self).value) }
                value = .array(items)
                return
            }
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                value = .null
            } else if let b = try? c.decode(Bool.self) {
                value = .bool(b)
            } else if let i = try? c.decode(Int64.self) {
                value = .number(String(i))
            } else if let d = try? c.decode(Double.self) {
                value = .number("\(d)")
            } else {
                value = .string(Array(try c.decode(String.self).utf8))
            }
        }
    }

    var bytes: [UInt8] {
        switch self {
        case .null: return Array("null".utf8)
        case .bool(let b): return Array((b ? "true" : "false").utf8)
        case .number(let n): return Array(n.utf8)
        case .string(let s): return [0x22] + s + [0x22]
        case .array(let a):
            var out: [UInt8] = [0x5B]
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(0x2C) }
                out += v.bytes
            }
            return out + [0x5D]
        case .object(let o):
            var out: [UInt8] = [0x7B]
            for (i, (k, v)) in o.enumerated() {
                if i > 0 { out.append(0x2C) }
                out += [0x22] + k + [0x22, 0x3A] + v.bytes
            }
            return out + [0x7D]
        }
    }
}

struct FuzzInput: Sendable, CustomTestStringConvertible {
    var kind: String
    var body: [UInt8]
    var headers: [String: String]
    var testDescription: String { kind }
    var httpFields: HTTPFields { HTTPFields(headers.map { HTTPFields.Element(name: HTTPFields.Element.Name($0.key)!, value: $0.value) }) }

    static let hugeNumbers = [
        "1e999", "-1e999", "1e-999", "123456789012345678901234567890123456789", "-0", "-0.0",
        "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1.7976931348623157e308",
        "4.9e-324", "0e0", "1E+2", "0.30000000000000004", "1" + String(repeating: "0", count: 400),
    ]
    static let badUTF8: [[UInt8]] = [[0xC0, 0xAF], [0xFF], [0xED, 0xA0, 0x80], [0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x00]]

    static let valid: [UInt8] = {
        let e = Fixtures.envelope(
            Fixtures.locations(4),
            events: [
                WireGeofenceEvent(
                    id: Fixtures.ids.next(), geofenceId: "depot", type: .enter, timestamp: WireTimestamp(millis: Fixtures.base))
            ], extras: ["fleet": "fuzz"])
        return [UInt8](WireJSONWriter.encode(e))
    }()

    static func make(seed: UInt64, index: UInt64) -> FuzzInput {
        var rng = SeededRandom(seed: seed &* 0x1000_0000_01B3 ^ index)
        let choice = Int.random(in: 0..<100, using: &rng)
        var kind: String
        var json: [UInt8]
        var gzipped = true
        var raw: [UInt8]?
        switch choice {
        case 0..<8:
            kind = "random bytes"
            raw = (0..<Int.random(in: 0...600, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if Bool.random(using: &rng) { raw = [0x1F, 0x8B, 0x08, 0x00] + raw! }  // a gzip-looking header
            json = []
        case 8..<22:
            kind = "mutated gzip"
            var g = pooled(&rng).gzip
            let op = Int.random(in: 0..<4, using: &rng)
            switch op {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    g[Int.random(in: 0..<g.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                }
            case 1: g = Array(g.prefix(Int.random(in: 0..<g.count, using: &rng)))
            case 2: g += (0..<Int.random(in: 1...20, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            default: g += g  // two members: trailing data
            }
            raw = g
            json = []
            kind += " op\(op)"
        case 22..<35:
            kind = "byte-mutated JSON"
            json = pooled(&rng).json
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                let at = Int.random(in: 0..<json.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: json[at] = UInt8.random(in: 0x20...0x7E, using: &rng)
                case 1: json.remove(at: at)
                case 2: json.insert(contentsOf: Array(#"{}[]",:0-e."#.utf8).shuffled(using: &rng).prefix(3), at: at)
                default: json.insert(contentsOf: badUTF8.randomElement(using: &rng)!, at: at)
                }
            }
        case 35..<45:
            kind = "deep nesting"
            let depth = [100, 511, 512, 513, 1_000, 10_000, 100_000].randomElement(using: &rng)!
            let array = Bool.random(using: &rng)
            // String(repeating:) copies whole blocks; a joined() of 100k small arrays cost more than the server's work.
            let nest = Array(
                (String(repeating: array ? "[" : #"{"a":"#, count: depth) + "1" + String(repeating: array ? "]" : "}", count: depth)).utf8)
            // Inside an unknown field of a valid envelope, or as the whole body.
            if Bool.random(using: &rng), case .object(var members) = pooled(&rng).tree {
                members.append((Array("nested".utf8), .string(Array("@@NEST@@".utf8))))
                let text = FuzzJSON.object(members).bytes
                let marker = Array("\"@@NEST@@\"".utf8)
                let r = text.firstRange(of: marker)!
                json = Array(text[..<r.lowerBound]) + nest + Array(text[r.upperBound...])
                kind += " \(depth) in field"
            } else {
                json = nest
                kind += " \(depth)"
            }
        default:
            kind = "structural"
            var tree = pooled(&rng).tree
            for _ in 0..<Int.random(in: 1...3, using: &rng) { mutate(&tree, depth: 0, rng: &rng, kind: &kind) }
            json = tree.bytes
        }
        var body = raw ?? json
        if raw == nil {
            gzipped = Int.random(in: 0..<5, using: &rng) > 0
            if gzipped { body = Gzip.deflate(json) }
        }
        var headers = ["Content-Type": "application/json"]
        if gzipped { headers["Content-Encoding"] = "gzip" }
        if Int.random(in: 0..<40, using: &rng) == 0 {
            headers["Content-Encoding"] = ["br", "deflate", "gzip, gzip", "GZIP", " identity ", "x-gzip"].randomElement(using: &rng)!
            kind += " encoding=\(headers["Content-Encoding"]!)"
        }
        return FuzzInput(kind: kind, body: body, headers: headers)
    }

    /// Valid envelopes (0…5 locations) as JSON, gzip and parsed tree, made once: building and
    /// parsing a fresh one for every input cost more than the server spends on it. Repeated
    /// ids among the 200s are dedupe work for the store, which is fine here.
    static let pool: [(json: [UInt8], gzip: [UInt8], tree: FuzzJSON)] = (0..<96).map { i in
        let e = Fixtures.envelope(Fixtures.locations(i % 6, startMillis: Fixtures.base + Int64(i) * 7_919_000))
        let json = [UInt8](WireJSONWriter.encode(e))
        return (json, Gzip.deflate(json), FuzzJSON.parse(json))
    }

    static func pooled(_ rng: inout SeededRandom) -> (json: [UInt8], gzip: [UInt8], tree: FuzzJSON) {
        pool[Int.random(in: 0..<pool.count, using: &rng)]
    }

    static func randomValue(_ rng: inout SeededRandom) -> FuzzJSON {
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2, 3: return .number(hugeNumbers.randomElement(using: &rng)!)
        case 4: return .string(Array("x".utf8) + badUTF8.randomElement(using: &rng)!)
        case 5: return .string(Array(String(repeating: "A", count: Int.random(in: 0...5000, using: &rng)).utf8))
        case 6: return .array([.number("1"), .string([])])
        case 7: return .object([(Array("id".utf8), .string(Array("not-a-uuid".utf8)))])
        default:
            return .string(
                Array(
                    ["", "2026-02-30T25:61:61.000Z", "01a2003d-0a3d-7326-bb88-92006dc30a59", "interval", "nan", "Infinity"]
                        .randomElement(using: &rng)!.utf8))
        }
    }

    /// One random structural change somewhere in the tree.
    static func mutate(_ node: inout FuzzJSON, depth: Int, rng: inout SeededRandom, kind: inout String) {
        switch node {
        case .object(var members) where !members.isEmpty:
            let i = Int.random(in: 0..<members.count, using: &rng)
            let dive = depth < 3 && Bool.random(using: &rng)
            if dive, case .object = members[i].1 {
                mutate(&members[i].1, depth: depth + 1, rng: &rng, kind: &kind)
            } else if dive, case .array = members[i].1 {
                mutate(&members[i].1, depth: depth + 1, rng: &rng, kind: &kind)
            } else {
                let key = String(decoding: members[i].0, as: UTF8.self)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0:
                    members.remove(at: i)
                    kind += " -\(key)"
                case 1:
                    members.append(members[i])
                    kind += " dup \(key)"
                case 2:
                    members[i].0 += badUTF8.randomElement(using: &rng)!
                    kind += " badkey \(key)"
                default:
                    members[i].1 = randomValue(&rng)
                    kind += " \(key)=\(String(decoding: members[i].1.bytes.prefix(24), as: UTF8.self))"
                }
            }
            node = .object(members)
        case .array(var items) where !items.isEmpty:
            let i = Int.random(in: 0..<items.count, using: &rng)
            if depth < 3, Bool.random(using: &rng) {
                mutate(&items[i], depth: depth + 1, rng: &rng, kind: &kind)
            } else if Bool.random(using: &rng) {
                items[i] = randomValue(&rng)
                kind += " [\(i)]=value"
            } else {
                items += Array(repeating: items[i], count: Int.random(in: 1...50, using: &rng))
                kind += " [\(i)] repeated"
            }
            node = .array(items)
        default:
            node = randomValue(&rng)
            kind += " root=value"
        }
    }

    /// Hand-picked inputs kept as regression tests.
    static let regressions: [FuzzInput] = {
        func gz(_ s: String) -> [UInt8] { Gzip.deflate(Array(s.utf8)) }
        let h = ["Content-Type": "application/json", "Content-Encoding": "gzip"]
        let v = String(decoding: valid, as: UTF8.self)
        return [
            FuzzInput(kind: "empty gzip body", body: [], headers: h),
            FuzzInput(kind: "empty JSON", body: gz(""), headers: h),
            FuzzInput(kind: "JSON null", body: gz("null"), headers: h),
            FuzzInput(kind: "top-level array", body: gz("[]"), headers: h),
            FuzzInput(
                kind: "schema_version 1e999",
                body: gz(v.replacingOccurrences(of: "\"schema_version\":1", with: "\"schema_version\":1e999")), headers: h),
            FuzzInput(
                kind: "schema_version 2^64",
                body: gz(v.replacingOccurrences(of: "\"schema_version\":1", with: "\"schema_version\":18446744073709551616")), headers: h),
            FuzzInput(
                kind: "latitude 1e999", body: gz(v.replacingOccurrences(of: "\"latitude\":52.52", with: "\"latitude\":1e999")), headers: h),
            FuzzInput(
                kind: "deep nesting 100k", body: gz(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)),
                headers: h),
            FuzzInput(
                kind: "deep nesting in unknown field",
                body: gz("{\"x\":" + String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000) + "," + v.dropFirst()),
                headers: h),
            FuzzInput(
                kind: "invalid UTF-8 in platform",
                body: Gzip.deflate(
                    Array(v.replacingOccurrences(of: "\"linux\"", with: "\"li@@\"").utf8)
                        .split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false).joined(separator: [0xFF]).map { $0 }),
                headers: h),
            FuzzInput(kind: "NUL in model", body: gz(v.replacingOccurrences(of: "\"test-rig\"", with: "\"te\\u0000st\"")), headers: h),
            FuzzInput(kind: "lone surrogate escape", body: gz(v.replacingOccurrences(of: "\"test-rig\"", with: "\"\\ud800\"")), headers: h),
            FuzzInput(kind: "gzip of gzip", body: Gzip.deflate(gz(v)), headers: h),
            FuzzInput(kind: "identity body labelled gzip", body: Array(v.utf8), headers: h),
        ]
    }()
}
