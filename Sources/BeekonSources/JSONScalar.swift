/// One JSON value as `NDJSONTrackReader` needs it: scalars keep their type
/// (a boolean is never a number), nested arrays and objects are `.other`.
enum JSONScalar: Decodable, Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        guard let c = try? decoder.singleValueContainer() else {
            self = .other
            return
        }
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = n.isFinite ? .number(n) : .other
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else {
            self = .other
        }
    }
}
