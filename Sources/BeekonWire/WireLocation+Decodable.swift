import Foundation

extension WireLocation: Decodable {
    /// Reads one schema-v1 location object — members it does not know are ignored — and
    /// validates it exactly as ``WireEnvelope/decode(_:)`` validates `locations[]` (the same code).
    /// Lets a receiver read a location nested in its own objects (a stored fix, a locate answer).
    /// - Throws: `DecodingError` for a missing or mistyped member, and `DecodingError.dataCorrupted`
    ///   with the ``WireDecodingError`` text for a value that breaks schema v1.
    public init(from decoder: any Decoder) throws {
        let raw = try RawLocation(from: decoder)
        let path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        do {
            self = try WireEnvelope.location(raw, path: path.isEmpty ? "$" : String(path.drop { $0 == "." }))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}
