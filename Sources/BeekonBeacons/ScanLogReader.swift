import Foundation

/// Reads decoded scan logs: concatenated JSON objects (whitespace between them optional)
/// with `scannerID`, `uuid`, `major`, `minor`, `calibratedPower`, `rssi` and `time`
/// (Unix milliseconds), as the Raspberry Pi scanners of the starksm64 recordings write them (SPEC BY-5).
public enum ScanLogReader {
    /// Decodes every object; a bad object is counted and skipped, never fatal.
    public static func read(_ data: Data) -> BeaconReadResult {
        var result = BeaconReadResult()
        let bytes = [UInt8](data)
        let objects = split(bytes, into: &result)
        // Fast path: every object at once, as one JSON array; any problem, then object by object.
        var array: [UInt8] = [UInt8(ascii: "[")]
        array.reserveCapacity(bytes.count + objects.count + 2)
        for (i, range) in objects.enumerated() {
            if i > 0 { array.append(UInt8(ascii: ",")) }
            array += bytes[range]
        }
        array.append(UInt8(ascii: "]"))
        if let entries = try? JSONDecoder().decode([Entry].self, from: Data(array)), entries.allSatisfy(\.isValid) {
            result.readings = entries.compactMap(\.reading)
            return result
        }
        for (i, range) in objects.enumerated() { decode(Data(bytes[range]), index: i + 1, into: &result) }
        return result
    }

    /// The byte ranges of the top-level objects; stray bytes are counted (and end the split).
    static func split(_ bytes: [UInt8], into result: inout BeaconReadResult) -> [ClosedRange<Int>] {
        var objects: [ClosedRange<Int>] = []
        var start: Int?
        var depth = 0
        var inString = false
        var escaped = false
        for (i, b) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"):
                if depth == 0 { start = i }
                depth += 1
            case UInt8(ascii: "}"):
                guard depth > 0, let s = start else {
                    result.record(.invalid(what: "scan log", detail: "'}' without '{'"), at: "byte \(i)")
                    continue
                }
                depth -= 1
                if depth == 0 {
                    objects.append(s...i)
                    start = nil
                }
            case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"):
                break
            default:
                if depth == 0 {
                    result.record(
                        .invalid(what: "scan log", detail: "byte 0x\(BeaconIdentity.hexDigits(b)) outside an object"), at: "byte \(i)")
                    return objects
                }
            }
        }
        if depth > 0 {
            result.record(.truncated(what: "scan log", offset: start ?? 0, needed: depth, available: 0), at: "object \(objects.count + 1)")
        }
        return objects
    }

    /// One object of the log; extra fields (`code`, `manufacturer`, `power`) are ignored.
    struct Entry: Decodable {
        var scannerID: String
        var uuid: String
        var major: Int
        var minor: Int
        var calibratedPower: Int
        var rssi: Int
        var time: Int64

        var isValid: Bool { reading != nil }

        /// The reading, or nil when the uuid or a power is out of range.
        var reading: BeaconReading? {
            guard let identity = BeaconIdentity(uuid: uuid, major: major, minor: minor),
                (-127...20).contains(calibratedPower), (-127...20).contains(rssi)
            else { return nil }
            return BeaconReading(
                scanner: scannerID, identity: identity, measuredPower: calibratedPower, rssi: rssi,
                time: Date(timeIntervalSince1970: Double(time) / 1000))
        }
    }

    static func decode(_ object: Data, index: Int, into result: inout BeaconReadResult) {
        let location = "object \(index)"
        let entry: Entry
        do {
            entry = try JSONDecoder().decode(Entry.self, from: object)
        } catch let DecodingError.keyNotFound(key, _) {
            return result.record(.invalid(what: "scan log object", detail: "missing \(key.stringValue)"), at: location)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let key = context.codingPath.last?.stringValue ?? "value"
            return result.record(.invalid(what: "scan log object", detail: "bad \(key)"), at: location)
        } catch {
            return result.record(.invalid(what: "scan log object", detail: "not valid JSON"), at: location)
        }
        guard BeaconIdentity(uuid: entry.uuid, major: entry.major, minor: entry.minor) != nil else {
            return result.record(.invalid(what: "scan log object", detail: "bad uuid"), at: location)
        }
        guard (-127...20).contains(entry.calibratedPower), (-127...20).contains(entry.rssi) else {
            return result.record(.invalid(what: "scan log object", detail: "calibratedPower or rssi outside −127…20 dBm"), at: location)
        }
        if let reading = entry.reading { result.readings.append(reading) }
    }
}
