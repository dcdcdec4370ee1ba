import Foundation
import BeekonWire

/// One line of gpsd's JSON protocol, reduced to what the gpsd provider uses.
///
/// Decoding is total: any input (garbage, binary noise, wrong types, deep
/// nesting, huge numbers) gives a value or a `GPSDMessage.DecodeError`, never a
/// crash. Fields with an unexpected type or a non-finite value are treated as
/// absent, so one odd field never costs a whole report.
public enum GPSDMessage: Sendable, Equatable {
    /// A time-position-velocity report.
    case tpv(TPV)
    /// A sky view report (dilution of precision and satellite counts).
    case sky(SKY)
    /// Any other class (`VERSION`, `DEVICES`, `WATCH`, `ERROR`, …), by name.
    case other(String)

    /// A line that is not a gpsd report.
    public enum DecodeError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Longer than `GPSDMessage.maxLineLength` bytes.
        case tooLong(Int)
        /// Not a JSON object.
        case notJSONObject
        /// A JSON object without a string `class` member.
        case noClass

        public var description: String {
            switch self {
            case .tooLong(let n): return "line of \(n) bytes is longer than \(GPSDMessage.maxLineLength)"
            case .notJSONObject: return "not a JSON object"
            case .noClass: return "JSON object without a \"class\" string"
            }
        }
    }

    /// A TPV report's fields; nil when absent or not a finite number.
    public struct TPV: Sendable, Equatable {
        /// 0/1 = no fix, 2 = 2D, 3 = 3D.
        public var mode: Int
        /// The fix time (UTC, millisecond precision); nil when gpsd has no time yet.
        public var time: Date?
        /// The `time` member as sent, the key used to recognise reports of one epoch.
        public var timeText: String?
        /// Latitude, degrees (nil outside [-90, 90]).
        public var lat: Double?
        /// Longitude, degrees (nil outside [-180, 180]).
        public var lon: Double?
        /// Altitude above mean sea level (`altMSL`, else the deprecated `alt`), metres.
        public var altMSL: Double?
        /// Altitude above the WGS 84 ellipsoid (`altHAE`), metres.
        public var altHAE: Double?
        /// Speed over ground, m/s.
        public var speed: Double?
        /// Course over ground, degrees from true north.
        public var track: Double?
        /// Estimated horizontal position error, metres (~95 %).
        public var eph: Double?
        /// Estimated longitude error, metres (~95 %).
        public var epx: Double?
        /// Estimated latitude error, metres (~95 %).
        public var epy: Double?
        /// Estimated vertical error, metres (~95 %).
        public var epv: Double?
        /// The device path that produced the report.
        public var device: String?

        /// Creates a report with only a mode.
        public init(mode: Int) { self.mode = mode }
    }

    /// A SKY report's dilution-of-precision values.
    public struct SKY: Sendable, Equatable {
        /// Horizontal dilution of precision.
        public var hdop: Double?
        /// Position (3D) dilution of precision.
        public var pdop: Double?
        /// Satellites used in the solution (`uSat`, or counted from `satellites[].used`).
        public var satellitesUsed: Int?
        /// The device path that produced the report.
        public var device: String?

        /// Creates an empty report.
        public init() {}
    }

    /// Lines longer than this are rejected before JSON decoding (gpsd's longest
    /// reports, SKY with every satellite, stay well below it).
    public static let maxLineLength = 64 * 1024

    /// Decodes one line (without its terminator).
    /// - Throws: `DecodeError` when the line is not a JSON object with a `class`.
    public static func decode<C: Collection>(_ line: C) throws(DecodeError) -> GPSDMessage where C.Element == UInt8 {
        guard line.count <= maxLineLength else { throw .tooLong(line.count) }
        // A cheap pre-check keeps noise away from the JSON parser.
        guard let first = line.first(where: { $0 != 0x20 && $0 != 0x09 }), first == UInt8(ascii: "{") else {
            throw .notJSONObject
        }
        let object: [String: Member]
        do { object = try JSONDecoder().decode([String: Member].self, from: Data(line)) } catch {
            throw .notJSONObject
        }
        guard case .string(let cls)? = object["class"] else { throw .noClass }
        switch cls {
        case "TPV": return .tpv(tpv(object))
        case "SKY": return .sky(sky(object))
        default: return .other(cls)
        }
    }

    private static func tpv(_ o: [String: Member]) -> TPV {
        var t = TPV(mode: o["mode"]?.integer ?? 0)
        if case .string(let s)? = o["time"], s.utf8.count <= 64 {
            t.timeText = s
            t.time = WireTimestamp(iso8601: s)?.date
        }
        t.lat = o["lat"]?.number.flatMap { (-90...90).contains($0) ? $0 : nil }
        t.lon = o["lon"]?.number.flatMap { (-180...180).contains($0) ? $0 : nil }
        t.altMSL = o["altMSL"]?.number ?? o["alt"]?.number
        t.altHAE = o["altHAE"]?.number
        t.speed = o["speed"]?.number
        t.track = o["track"]?.number
        t.eph = o["eph"]?.number
        t.epx = o["epx"]?.number
        t.epy = o["epy"]?.number
        t.epv = o["epv"]?.number
        if case .string(let d)? = o["device"] { t.device = d }
        return t
    }

    private static func sky(_ o: [String: Member]) -> SKY {
        var s = SKY()
        s.hdop = o["hdop"]?.number
        s.pdop = o["pdop"]?.number
        if let used = o["uSat"]?.integer {
            s.satellitesUsed = used
        } else if case .usedCount(let n)? = o["satellites"] {
            s.satellitesUsed = n
        }
        if case .string(let d)? = o["device"] { s.device = d }
        return s
    }

    /// One member value: scalars keep their type; `satellites` arrays are
    /// reduced to a count of used satellites; anything else is `.other`.
    enum Member: Decodable, Sendable {
        case number(Double)
        case string(String)
        case usedCount(Int)
        case other

        init(from decoder: any Decoder) throws {
            if let c = try? decoder.singleValueContainer() {
                if let b = try? c.decode(Bool.self) {
                    _ = b
                    self = .other
                    return
                }
                if let n = try? c.decode(Double.self) {
                    self = n.isFinite ? .number(n) : .other
                    return
                }
                if let s = try? c.decode(String.self) {
                    self = .string(s)
                    return
                }
                if let sats = try? c.decode([Satellite].self) {
                    self = .usedCount(sats.reduce(0) { $0 + ($1.used == true ? 1 : 0) })
                    return
                }
            }
            self = .other
        }

        var number: Double? {
            if case .number(let n) = self { return n }
            return nil
        }

        /// A whole number in a sane range, else nil.
        var integer: Int? {
            guard case .number(let n) = self, n == n.rounded(), abs(n) < 1e9 else { return nil }
            return Int(n)
        }
    }

    /// A `satellites[]` element: only `used` matters; anything else decodes as unused.
    struct Satellite: Decodable, Sendable {
        var used: Bool?
        init(from decoder: any Decoder) throws {
            let c = try? decoder.container(keyedBy: Key.self)
            used = (try? c?.decodeIfPresent(Bool.self, forKey: .used)) ?? nil
        }
        enum Key: String, CodingKey { case used }
    }
}
