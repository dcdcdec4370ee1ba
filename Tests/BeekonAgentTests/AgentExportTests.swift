import BeekonTestSupport
import Foundation
import Testing
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Databases filled once by real replays and shared by the export tests.
actor ExportFixtures {
    static let shared = ExportFixtures()

    private var dir: TempDir?
    private var walk: Task<String, any Error>?
    private var twoSessions: Task<String, any Error>?

    private func tmp() throws -> TempDir {
        if let dir { return dir }
        let d = TempDir("exports")
        dir = d
        return d
    }

    /// The walk GPX replayed at max speed with the gate off: one session, every fix stored.
    func walkDB() async throws -> String {
        if let walk { return try await walk.value }
        let d = try tmp()
        let task = Task<String, any Error> {
            let db = d.path("walk.sqlite")
            let out = try await AgentProcess.run(
                ["track", "--source", "replay:\(Fixtures.walkGPX)", "--speed", "max", "--db", db, "--config", try d.gateOffConfig()])
            guard out.status == 0 else { throw AgentProcess.Timeout(description: "walk replay failed: \(out.stderr)") }
            return db
        }
        walk = task
        return try await task.value
    }

    /// Two sessions (walk, then Višnjan), both rebased to now so the 7-day prune keeps both.
    func twoSessionDB() async throws -> String {
        if let twoSessions { return try await twoSessions.value }
        let d = try tmp()
        let task = Task<String, any Error> {
            let db = d.path("two.sqlite")
            for track in [Fixtures.walkGPX, Fixtures.visnjanGPX] {
                let out = try await AgentProcess.run(
                    ["track", "--source", "replay:\(track)", "--speed", "max", "--rebase", "--db", db])
                guard out.status == 0 else { throw AgentProcess.Timeout(description: "replay failed: \(out.stderr)") }
            }
            return db
        }
        twoSessions = task
        return try await task.value
    }
}

@Suite("Agent: history exports from real replays")
struct AgentExportTests {
    static let locationKeys: Set = [
        "id", "timestamp", "trigger", "motion", "is_mock", "latitude", "longitude",
        "accuracy", "speed", "bearing", "altitude", "activity", "quality",
    ]
    static let requiredKeys: Set = ["id", "timestamp", "trigger", "motion", "is_mock", "latitude", "longitude", "session_id"]

    static func export(_ db: String, _ format: String, _ extra: [String] = []) async throws -> AgentProcess.Outcome {
        let out = try await AgentProcess.run(["history", "--db", db, "--format", format] + extra, timeout: .seconds(60))
        try #require(out.status == 0 && !out.signalled, "history --format \(format) failed: \(out.stderr)")
        return out
    }

    static func isWireTimestamp(_ s: String) -> Bool {
        s.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil
    }

    @Test func ndjsonHasSchemaV1FieldsInTimeOrder() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        let rows = try await HistoryRow.read(db: db)
        // 1,856 points, 4 out of order and so rejected as not later (gate off otherwise).
        #expect(rows.count > 1_800 && rows.count <= 1_856, "\(rows.count) rows")
        for row in rows {
            let keys = Set(row.raw.keys)
            #expect(Self.requiredKeys.isSubset(of: keys), "missing \(Self.requiredKeys.subtracting(keys))")
            #expect(
                keys.subtracting(Self.locationKeys).subtracting(["session_id"]).isEmpty,
                "unexpected keys \(keys.subtracting(Self.locationKeys))")
            #expect(Self.isWireTimestamp(row.timestamp), "\(row.timestamp)")
            #expect(UUID(uuidString: row.id) != nil && row.id == row.id.lowercased())
            #expect(row.raw["is_mock"] as? Bool == false)
            #expect(row.raw.values.allSatisfy { !($0 is NSNull) }, "null in \(row.raw)")
        }
        #expect(zip(rows, rows.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp }, "not in time order")
        #expect(Set(rows.map(\.sessionID)).count == 1)
        // The first point of the track, with its extensions (hAcc, speed, course).
        let first = try #require(rows.first)
        #expect(first.timestamp == "2019-12-15T20:19:55.000Z")
        #expect(first.latitude == Fixtures.walkFirst.lat)
        #expect(first.longitude == Fixtures.walkFirst.lon)
        #expect(first.altitude == Fixtures.walkFirst.ele)
        #expect(jsonNumber(first.raw["accuracy"]) == 1.801682)
        #expect(jsonNumber(first.raw["speed"]) == 1.310662)
        #expect(jsonNumber(first.raw["bearing"]) == 101.747269)
    }

    @Test func geojsonIsAFeatureCollectionWithOneLonLatLineString() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        let rows = try await HistoryRow.read(db: db)
        let out = try await Self.export(db, "geojson")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(out.stdoutText.utf8)) as? [String: Any])
        #expect(root["type"] as? String == "FeatureCollection")
        let features = try #require(root["features"] as? [[String: Any]])
        try #require(features.count == 1)
        let feature = features[0]
        #expect(feature["type"] as? String == "Feature")
        let geometry = try #require(feature["geometry"] as? [String: Any])
        #expect(geometry["type"] as? String == "LineString")
        let coords = try #require(geometry["coordinates"] as? [[Any]]).map { $0.compactMap(jsonNumber) }
        #expect(coords.count == rows.count)
        // [lon, lat, alt]: the walk is near Savannah, GA (lat ≈ 32.06, lon ≈ -81.10).
        #expect(coords.first == [Fixtures.walkFirst.lon, Fixtures.walkFirst.lat, Fixtures.walkFirst.ele])
        #expect(
            coords.allSatisfy { $0.count == 3 && (-81.2 ... -81.0).contains($0[0]) && (32.0...32.2).contains($0[1]) },
            "coordinates not in [lon, lat, alt] order")
        for (c, r) in zip(coords, rows) {
            #expect(c[0] == r.longitude && c[1] == r.latitude)
        }
        let props = try #require(feature["properties"] as? [String: Any])
        #expect(props["session_id"] as? String == rows.first?.sessionID)
    }

    @Test func geojsonHasOneLineStringPerSession() async throws {
        let db = try await ExportFixtures.shared.twoSessionDB()
        let rows = try await HistoryRow.read(db: db)
        let sessions = Set(rows.map(\.sessionID))
        #expect(sessions.count == 2)
        let out = try await Self.export(db, "geojson")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(out.stdoutText.utf8)) as? [String: Any])
        #expect(root["type"] as? String == "FeatureCollection")
        let features = try #require(root["features"] as? [[String: Any]])
        #expect(features.count == 2)
        var seen: Set<String> = []
        for f in features {
            let geometry = try #require(f["geometry"] as? [String: Any])
            #expect(geometry["type"] as? String == "LineString")
            let coords = try #require(geometry["coordinates"] as? [[Any]]).map { $0.compactMap(jsonNumber) }
            let session = try #require((f["properties"] as? [String: Any])?["session_id"] as? String)
            seen.insert(session)
            let sessionRows = rows.filter { $0.sessionID == session }
            #expect(coords.count == sessionRows.count)
            for (c, r) in zip(coords, sessionRows) { #expect(c[0] == r.longitude && c[1] == r.latitude) }
        }
        #expect(seen == sessions)
        // Walk (Savannah, lon -81) and Višnjan (Istria, lon 13.7, lat 45.3): first points in [lon, lat, alt].
        let firsts = features.compactMap { ($0["geometry"] as? [String: Any])?["coordinates"] as? [[Any]] }
            .compactMap { $0.first?.compactMap(jsonNumber) }
        #expect(firsts.contains([Fixtures.walkFirst.lon, Fixtures.walkFirst.lat, Fixtures.walkFirst.ele]))
        #expect(firsts.contains([13.715185, 45.273245, 271]))
    }

    @Test func gpxIsWellFormedGPX11() async throws {
        let db = try await ExportFixtures.shared.twoSessionDB()
        let rows = try await HistoryRow.read(db: db)
        let out = try await Self.export(db, "gpx")
        let doc = try GPXStructure.check(Data(out.stdoutText.utf8))
        #expect(doc.problems.isEmpty, "\(doc.problems.prefix(10))")
        #expect(doc.tracks.count == 2, "one trk per session")
        #expect(doc.tracks.allSatisfy { $0.count == 1 }, "one trkseg per trk")
        let points = doc.tracks.flatMap { $0.flatMap { $0 } }
        #expect(points.count == rows.count)
        // Every exported point is a stored fix, coordinates not swapped.
        #expect(Set(rows.map(\.sessionID)).count == 2)
        let stored = Set(rows.map { "\($0.latitude),\($0.longitude),\($0.timestamp)" })
        for p in points {
            #expect(stored.contains("\(p.lat),\(p.lon),\(p.time)"), "GPX point \(p) is not a stored fix")
        }
    }

    static let gpsbabel: String? = ["/usr/bin/gpsbabel", "/usr/local/bin/gpsbabel", "/opt/homebrew/bin/gpsbabel"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// An independent GPX reader: `gpsbabel -t -i gpx -f FILE -o unicsv -F -`.
    @Test(.enabled(if: gpsbabel != nil, "gpsbabel is not installed"))
    func gpxRoundTripsThroughGpsbabel() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        let rows = try await HistoryRow.read(db: db)
        let out = try await Self.export(db, "gpx")
        let tmp = TempDir()
        let file = try tmp.write("walk.gpx", out.stdoutText + "\n")
        let babel = Process()
        babel.executableURL = URL(fileURLWithPath: try #require(Self.gpsbabel))
        babel.arguments = ["-t", "-i", "gpx", "-f", file, "-o", "unicsv", "-F", "-"]
        let pipe = Pipe()
        let err = Pipe()
        babel.standardOutput = pipe
        babel.standardError = err
        try babel.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        babel.waitUntilExit()
        #expect(babel.terminationStatus == 0, "gpsbabel: \(errText)")
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        let header = try #require(lines.first).split(separator: ",").map(String.init)
        let lat = try #require(header.firstIndex(of: "Latitude"))
        let lon = try #require(header.firstIndex(of: "Longitude"))
        let alt = header.firstIndex(of: "Altitude")
        let date = header.firstIndex(of: "Date")
        let time = header.firstIndex(of: "Time")
        let points = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(points.count == rows.count, "gpsbabel read \(points.count) points, history has \(rows.count)")
        for (p, r) in zip(points, rows) {
            #expect(abs((Double(p[lat]) ?? .nan) - r.latitude) < 1e-6, "\(p) vs \(r.raw)")
            #expect(abs((Double(p[lon]) ?? .nan) - r.longitude) < 1e-6, "\(p) vs \(r.raw)")
            if let alt, let ele = r.altitude { #expect(abs((Double(p[alt]) ?? .nan) - ele) < 0.051) }
            if let date, let time {
                // unicsv: 2019/12/15,20:19:55 — compare to the second.
                let stamp = p[date].replacingOccurrences(of: "/", with: "-") + "T" + p[time].prefix(8)
                #expect(r.timestamp.hasPrefix(stamp), "\(stamp) vs \(r.timestamp)")
            }
        }
    }

    @Test func csvHasHeaderAndOneRFC4180RecordPerFix() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        let rows = try await HistoryRow.read(db: db)
        let out = try await Self.export(db, "csv")
        let text = out.stdout.joined(separator: "\n")
        let records = try CSV.parse(text)
        let header = try #require(records.first)
        #expect(
            header == [
                "id", "session_id", "timestamp", "latitude", "longitude", "accuracy", "speed", "bearing",
                "altitude", "trigger", "motion", "is_mock", "activity", "quality",
            ])
        let body = records.dropFirst().filter { $0 != [""] }
        #expect(body.count == rows.count)
        #expect(body.allSatisfy { $0.count == header.count }, "a record with the wrong number of fields")
        for (rec, row) in zip(body, rows) {
            #expect(rec[0] == row.id && rec[1] == row.sessionID && rec[2] == row.timestamp)
            #expect(Double(rec[3]) == row.latitude && Double(rec[4]) == row.longitude)
            #expect(rec[11] == "false")
        }
    }

    @Test func fromAndToFilterInclusively() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        let all = try await HistoryRow.read(db: db)
        let from = "2019-12-15T20:30:00Z"
        let to = "2019-12-15T20:35:00Z"
        let window = try await HistoryRow.read(db: db, ["--from", from, "--to", to])
        let expected = all.filter { $0.timestamp >= "2019-12-15T20:30:00.000Z" && $0.timestamp <= "2019-12-15T20:35:00.000Z" }
        #expect(!expected.isEmpty)
        #expect(window.map(\.id) == expected.map(\.id))
        // Bounds are inclusive: an exact fix time as both ends returns that fix.
        let pick = all[all.count / 2]
        let exact = try await HistoryRow.read(db: db, ["--from", pick.timestamp, "--to", pick.timestamp])
        #expect(exact.map(\.id) == [pick.id])
        // Date-only bounds.
        #expect(try await HistoryRow.read(db: db, ["--from", "2019-12-16"]).isEmpty)
        #expect(try await HistoryRow.read(db: db, ["--to", "2019-12-15"]).isEmpty)
        #expect(try await HistoryRow.read(db: db, ["--from", "2019-12-15", "--to", "2019-12-16"]).count == all.count)
        // Every format honours the window.
        let csv = try await Self.export(db, "csv", ["--from", from, "--to", to])
        #expect(try CSV.parse(csv.stdout.joined(separator: "\n")).dropFirst().filter { $0 != [""] }.count == expected.count)
    }

    @Test func badFormatOrDateExitsTwo() async throws {
        let db = try await ExportFixtures.shared.walkDB()
        for args in [["--format", "kml"], ["--format", ""], ["--from", "yesterday"], ["--to", "2019-13-45T99:00:00Z"]] {
            let out = try await AgentProcess.run(["history", "--db", db] + args, timeout: .seconds(30))
            #expect(out.status == 2, "\(args): exit \(out.status), stderr \(out.stderr)")
            #expect(out.stderr.split(separator: "\n").count == 1, "\(args): \(out.stderr)")
            #expect(out.stdout.allSatisfy { $0.isEmpty }, "\(args): wrote output: \(out.stdout.prefix(3))")
        }
        let missing = try await AgentProcess.run(["history", "--db", "/nonexistent/beekon.sqlite"], timeout: .seconds(30))
        #expect(missing.status != 0 && !missing.signalled)
    }
}

/// Checks a document against the GPX 1.1 structure (root, namespace, version, element
/// order from the XSD sequences) and collects the track points.
final class GPXStructure: NSObject, XMLParserDelegate {
    static let ns = "http://www.topografix.com/GPX/1/1"
    /// Child order in each complex type of the GPX 1.1 XSD (sequences).
    static let order: [String: [String]] = [
        "gpx": ["metadata", "wpt", "rte", "trk", "extensions"],
        "trk": ["name", "cmt", "desc", "src", "link", "number", "type", "extensions", "trkseg"],
        "trkseg": ["trkpt", "extensions"],
        "trkpt": [
            "ele", "time", "magvar", "geoidheight", "name", "cmt", "desc", "src", "link", "sym", "type",
            "fix", "sat", "hdop", "vdop", "pdop", "ageofdgpsdata", "dgpsid", "extensions",
        ],
    ]

    struct Point: CustomStringConvertible {
        var lat: Double, lon: Double, ele: Double?, time: String
        var description: String { "(\(lat), \(lon), \(ele.map { "\($0)" } ?? "-"), \(time))" }
    }

    var problems: [String] = []
    /// trk → trkseg → points.
    var tracks: [[[Point]]] = []
    private var stack: [(name: String, lastChild: Int)] = []
    private var text = ""
    private var point: Point?
    private var sawRoot = false
    private let iso: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()

    static func check(_ data: Data) throws -> GPXStructure {
        let parser = XMLParser(data: data)
        let s = GPXStructure()
        parser.delegate = s
        parser.shouldProcessNamespaces = true
        let ok = parser.parse()
        try #require(ok, "not well-formed XML: \(String(describing: parser.parserError)) at line \(parser.lineNumber)")
        if !s.sawRoot { s.problems.append("no gpx root") }
        return s
    }

    private var inExtensions: Bool { stack.contains { $0.name == "extensions" } }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
    ) {
        text = ""
        if inExtensions {
            stack.append((name, -1))
            return
        }
        if namespaceURI != Self.ns { problems.append("<\(qualifiedName ?? name)> in namespace \(namespaceURI ?? "none")") }
        if stack.isEmpty {
            sawRoot = true
            if name != "gpx" { problems.append("root is <\(name)>") }
            if attributes["version"] != "1.1" { problems.append("version is \(attributes["version"] ?? "missing")") }
            if attributes["creator"]?.isEmpty != false { problems.append("gpx/@creator is required") }
        } else {
            let parent = stack[stack.count - 1]
            if let allowed = Self.order[parent.name] {
                if let i = allowed.firstIndex(of: name) {
                    if i < parent.lastChild { problems.append("<\(name)> after a later sibling in <\(parent.name)>") }
                    stack[stack.count - 1].lastChild = i
                } else {
                    problems.append("<\(name)> is not allowed in <\(parent.name)>")
                }
            }
        }
        switch name {
        case "trk": tracks.append([])
        case "trkseg": if !tracks.isEmpty { tracks[tracks.count - 1].append([]) }
        case "trkpt":
            guard let lat = attributes["lat"].flatMap(Double.init), let lon = attributes["lon"].flatMap(Double.init),
                (-90...90).contains(lat), (-180..<180).contains(lon)
            else {
                problems.append("trkpt with bad lat/lon \(attributes)")
                return stack.append((name, -1))
            }
            point = Point(lat: lat, lon: lon, ele: nil, time: "")
        default: break
        }
        stack.append((name, -1))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
        if inExtensions || name == "extensions" { return }
        switch name {
        case "ele":
            if let v = Double(text) { point?.ele = v } else { problems.append("ele '\(text)'") }
        case "time":
            if iso.date(from: text) == nil { problems.append("time '\(text)' is not ISO 8601") }
            point?.time = text
        case "trkpt":
            if let p = point, !tracks.isEmpty, !tracks[tracks.count - 1].isEmpty {
                if p.time.isEmpty { problems.append("trkpt without time") }
                tracks[tracks.count - 1][tracks[tracks.count - 1].count - 1].append(p)
            }
            point = nil
        default: break
        }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        problems.append("parse error: \(parseError)")
    }
}

/// A strict RFC 4180 reader: quoted fields with doubled quotes, CRLF or LF records;
/// a quote inside an unquoted field is an error.
enum CSV {
    struct Malformed: Error, CustomStringConvertible { var description: String }

    static func parse(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var wasQuoted = false
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        field.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"":
                guard field.isEmpty, !wasQuoted else { throw Malformed(description: "stray quote in record \(records.count + 1)") }
                quoted = true
                wasQuoted = true
            case ",":
                record.append(field)
                field = ""
                wasQuoted = false
            case "\r\n", "\n", "\r":
                record.append(field)
                records.append(record)
                record = []
                field = ""
                wasQuoted = false
            default:
                guard !wasQuoted else { throw Malformed(description: "text after a closing quote in record \(records.count + 1)") }
                field.append(c)
            }
        }
        if quoted { throw Malformed(description: "unterminated quoted field") }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        return records
    }
}
