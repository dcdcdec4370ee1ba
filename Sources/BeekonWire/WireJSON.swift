import Foundation

/// Writes schema-v1 JSON with the frozen encoding rules:
/// fixed key order, integral numbers without a decimal point, optionals
/// omitted (never `null`), non-finite numbers dropped, lowercase snake_case
/// enums, timestamps as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
public struct WireJSONWriter: Sendable {
    /// The bytes written so far (UTF-8).
    public private(set) var bytes: [UInt8] = []

    /// Creates an empty writer; `capacity` pre-sizes the buffer.
    public init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    /// Encodes a whole envelope.
    public static func encode(_ envelope: WireEnvelope) -> Data {
        var w = WireJSONWriter(capacity: 256 + envelope.locations.count * 220)
        w.write(envelope)
        return Data(w.bytes)
    }

    /// Encodes one location object (used for NDJSON exports and tests).
    public static func encode(_ location: WireLocation) -> Data {
        var w = WireJSONWriter(capacity: 256)
        w.write(location)
        return Data(w.bytes)
    }

    /// Appends an envelope object.
    public mutating func write(_ e: WireEnvelope) {
        raw("{\"schema_version\":")
        number(Double(WireEnvelope.schemaVersion))
        raw(",\"batch_id\":")
        string(e.batchId.wireString)
        raw(",\"session_id\":")
        string(e.sessionId.wireString)
        raw(",\"sent_at\":")
        string(e.sentAt.description)
        raw(",\"device\":{\"install_id\":")
        string(e.device.installId.wireString)
        raw(",\"platform\":")
        string(e.device.platform)
        raw(",\"sdk_version\":")
        string(e.device.sdkVersion)
        if let model = e.device.model, !model.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            raw(",\"model\":")
            string(model)
        }
        if let s = e.device.syncIntervalSeconds, s > 0 {
            raw(",\"sync_interval_seconds\":")
            raw(String(s))
        }
        if let c = e.device.checkInIntervalSeconds, c > 0 {
            raw(",\"check_in_interval_seconds\":")
            raw(String(c))
        }
        raw("}")
        if !e.extras.isEmpty {
            raw(",\"extras\":{")
            for (i, key) in e.extras.keys.sorted().enumerated() {
                if i > 0 { raw(",") }
                string(key)
                raw(":")
                string(e.extras[key]!)
            }
            raw("}")
        }
        raw(",\"locations\":[")
        for (i, l) in e.locations.enumerated() {
            if i > 0 { raw(",") }
            write(l)
        }
        raw("],\"geofence_events\":[")
        for (i, g) in e.geofenceEvents.enumerated() {
            if i > 0 { raw(",") }
            write(g)
        }
        raw("]")
        writeProximityEvents(e.proximityEvents)
        raw("}")
    }

    /// Appends `,"key":"value"` (a string member after the first).
    public mutating func member(_ key: String, string value: String) {
        raw(",\"")
        raw(key)
        raw("\":")
        string(value)
    }

    /// Appends `,"key":json` for each (key, already-encoded JSON value).
    mutating func appendFields(_ fields: [(String, String)]) {
        for (key, json) in fields {
            raw(",")
            string(key)
            raw(":")
            raw(json)
        }
    }

    /// Appends a geofence event object; `members` appends further `,"key":value` members before it closes.
    public mutating func write(_ g: WireGeofenceEvent, members: (inout WireJSONWriter) -> Void = { _ in }) {
        raw("{\"id\":")
        string(g.id.wireString)
        raw(",\"geofence_id\":")
        string(g.geofenceId)
        raw(",\"type\":")
        string(g.type.rawValue)
        raw(",\"timestamp\":")
        string(g.timestamp.description)
        members(&self)
        raw("}")
    }

    /// Appends raw, already-valid JSON text.
    public mutating func raw(_ s: String) { bytes.append(contentsOf: s.utf8) }

    /// Appends a JSON number: integral values without a decimal point, others
    /// in the shortest form that round-trips. Non-finite values become 0 — callers
    /// drop them before (`optionalNumber`); required coordinates are validated upstream.
    public mutating func number(_ v: Double) {
        guard v.isFinite else {
            raw("0")
            return
        }
        // Every integral value Int64 holds prints as an integer; Double.description
        // would give "9007199254740992.0" for [2^53, 1e16).
        if v == v.rounded(), abs(v) < 0x1p63 {
            raw(String(Int64(v)))
        } else {
            raw(v.description)
        }
    }

    /// Appends a JSON string with the required escapes.
    public mutating func string(_ s: String) {
        bytes.append(0x22)
        // Fast path: nothing to escape (ids, timestamps, enum values), one bulk append.
        var s = s
        let plain = s.withUTF8 { u in
            guard !u.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else { return false }
            bytes.append(contentsOf: u)
            return true
        }
        if plain {
            bytes.append(0x22)
            return
        }
        for c in s.utf8 {
            switch c {
            case 0x22:
                bytes.append(0x5C)
                bytes.append(0x22)
            case 0x5C:
                bytes.append(0x5C)
                bytes.append(0x5C)
            case 0x0A:
                bytes.append(0x5C)
                bytes.append(0x6E)
            case 0x0D:
                bytes.append(0x5C)
                bytes.append(0x72)
            case 0x09:
                bytes.append(0x5C)
                bytes.append(0x74)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 0xF)]])
            default: bytes.append(c)
            }
        }
        bytes.append(0x22)
    }
}
