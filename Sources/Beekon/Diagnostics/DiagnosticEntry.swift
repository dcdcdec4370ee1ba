import Foundation
import BeekonWire

/// One entry of the diagnostic log (BY-6): what a support engineer needs, never a secret.
public struct DiagnosticEntry: Sendable, Hashable {
    /// Increases with every entry (oldest smallest).
    public var sequence: Int64
    /// When it was logged (the SDK's clock).
    public var timestamp: Date
    /// Severity.
    public var level: DiagnosticLevel
    /// What happened, e.g. "state changed", "upload failed, will retry".
    public var message: String
    /// Details: state, status, backoff, profile…; coordinates are redacted on export unless asked for.
    public var metadata: [String: String]

    /// Creates an entry.
    public init(sequence: Int64, timestamp: Date, level: DiagnosticLevel, message: String, metadata: [String: String]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.level = level
        self.message = message
        self.metadata = metadata
    }

    /// Metadata keys whose values are positions: redacted unless coordinates are asked for.
    static let coordinateKeys: Set<String> = ["latitude", "longitude", "lat", "lon", "position", "coordinates", "location"]
    /// Metadata keys never kept at all, whatever the caller asks (defence in depth: the SDK never logs them).
    static let secretKeys: Set<String> = ["token", "access_token", "refresh_token", "authorization", "password", "secret"]

    /// This entry with coordinates replaced by "redacted" (unless `includeCoordinates`) and
    /// secret-named keys dropped.
    public func redacted(includeCoordinates: Bool = false) -> DiagnosticEntry {
        var copy = self
        copy.metadata = metadata.filter { !Self.secretKeys.contains($0.key.lowercased()) }
        if !includeCoordinates {
            for key in copy.metadata.keys where Self.coordinateKeys.contains(key.lowercased()) { copy.metadata[key] = "redacted" }
        }
        return copy
    }

    /// One NDJSON line: `{"seq","ts","level","message","metadata":{…}}` (sorted keys).
    public var ndjson: String {
        let object: [String: Any] = [
            "seq": sequence, "ts": WireTimestamp(timestamp).description, "level": level.rawValue,
            "message": message, "metadata": metadata,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// One human-readable line: `time level message key=value …`.
    public var text: String {
        let details = metadata.keys.sorted().map { "\($0)=\(metadata[$0]!)" }.joined(separator: " ")
        return "\(WireTimestamp(timestamp)) \(level.rawValue.uppercased()) \(message)" + (details.isEmpty ? "" : " " + details)
    }
}
