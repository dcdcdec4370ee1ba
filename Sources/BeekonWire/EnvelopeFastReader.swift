import Foundation

/// The fast path of `WireEnvelope.decode`: one pass over the bytes of an envelope as the SDK
/// writes it, straight into the `Raw…` mirrors that `JSONDecoder` fills on the general path.
///
/// It is an optimisation, never a second definition of the format. It reads only what it can
/// read exactly as `JSONDecoder` would — strict RFC 8259 grammar, strings without escapes, no
/// `null`, no repeated key, numbers it converts with correct rounding — and gives up (nil) on
/// anything else, so the general path decides every unusual body and words every error. A
/// result it does return equals the general path's (`EnvelopeFastReaderTests` checks the two
/// against each other on written, reordered and mutated bodies).
///
/// Why: on the server, `JSONDecoder` was half of the CPU an upload costs (about 19 ms of a
/// 1,000-fix batch; BENCHMARKS.md, P3).
enum EnvelopeFastReader {
    /// The envelope's mirror, or nil when the general path must decide.
    static func read(_ data: Data) -> RawEnvelope? {
        data.withUnsafeBytes { bytes -> RawEnvelope? in
            var cursor = JSONCursor(bytes: bytes)
            do throws(JSONCursor.GiveUp) {
                let envelope = try cursor.envelope()
                try cursor.end()
                return envelope
            } catch {
                return nil
            }
        }
    }
}

/// The keys of one object seen so far: a repeated key gives up (the general path decides).
struct SeenKeys {
    private var known: UInt32 = 0
    private var unknown: Set<[UInt8]> = []

    /// Records the known key with index `bit`.
    mutating func insert(_ bit: Int) throws(JSONCursor.GiveUp) {
        let mask: UInt32 = 1 << UInt32(bit)
        guard known & mask == 0 else { throw JSONCursor.GiveUp() }
        known |= mask
    }

    /// Records an ignored key.
    /// (A key outside ASCII gives up: `JSONDecoder` matches keys by canonical equivalence.)
    mutating func insertUnknown(_ key: UnsafeRawBufferPointer) throws(JSONCursor.GiveUp) {
        guard !key.contains(where: { $0 >= 0x80 }), unknown.insert(Array(key)).inserted else { throw JSONCursor.GiveUp() }
    }

    /// Whether every known key with a bit in `required` was seen.
    func contains(all required: UInt32) -> Bool { known & required == required }
}

extension UnsafeRawBufferPointer {
    /// Whether these bytes spell `key`.
    func spells(_ key: StaticString) -> Bool {
        count == key.utf8CodeUnitCount && memcmp(baseAddress!, key.utf8Start, count) == 0
    }

    /// The index of the first of `keys` these bytes spell, if any.
    func index(in keys: [StaticString]) -> Int? {
        keys.firstIndex { spells($0) }
    }
}
