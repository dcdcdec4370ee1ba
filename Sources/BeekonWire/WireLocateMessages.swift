import Foundation

/// An open locate request as its device is told of it (SPEC BY-2): an item of the command
/// channel's answer (``WireCommands``) and of an ingest answer's `locate_requests`
/// (``WireIngestAnswer``). Written `{"id","created_at","expires_at"}` in that order.
public struct WireLocateNotice: Hashable, Sendable {
    /// The request id; the answering fix carries it as `locate_request_id`.
    public var id: UUID
    /// When the request was made.
    public var createdAt: WireTimestamp
    /// When the request expires unanswered.
    public var expiresAt: WireTimestamp

    /// Creates a notice.
    public init(id: UUID, createdAt: WireTimestamp, expiresAt: WireTimestamp) {
        self.id = id
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// The command channel's answer (`GET /v1/devices/{install_id}/commands`, 200):
/// `{"locate_requests":[…]}`, the device's open requests (possibly none).
public struct WireCommands: Hashable, Sendable {
    /// The open locate requests, now marked delivered.
    public var locateRequests: [WireLocateNotice]

    /// Creates an answer.
    public init(locateRequests: [WireLocateNotice]) { self.locateRequests = locateRequests }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 32 + locateRequests.count * 130)
        w.raw("{\"locate_requests\":")
        w.write(locateRequests)
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads an answer; unknown members are ignored (must-ignore).
    /// - Throws: `WireDecodingError` when the body is not JSON of this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireCommands {
        struct Raw: Decodable {
            var locate_requests: [RawLocateNotice]
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        return WireCommands(locateRequests: try WireLocateNotice.validated(raw.locate_requests, path: "locate_requests"))
    }
}

/// A device's refusal of a locate request
/// (`POST /v1/devices/{install_id}/locate/{request_id}/answer`): `{"outcome":"refused","reason":"…"}`.
/// A fix answers by carrying `locate_request_id` in an ordinary upload instead.
public struct WireLocateRefusal: Hashable, Sendable {
    /// The only outcome this message carries.
    public static let outcome = "refused"
    /// Why the device declined (e.g. `sharing_off`, `too_soon`, `no_fix`); never empty.
    public var reason: String

    /// Creates a refusal.
    public init(reason: String) { self.reason = reason }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 48 + reason.utf8.count)
        w.raw("{\"outcome\":")
        w.string(Self.outcome)
        w.raw(",\"reason\":")
        w.string(reason)
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads a refusal; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape, the outcome is not `refused`
    ///   or the reason is empty.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireLocateRefusal {
        struct Raw: Decodable {
            var outcome: String
            var reason: String
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        guard raw.outcome == outcome else { throw .invalid(path: "outcome", reason: "must be \"\(outcome)\"") }
        guard !raw.reason.isEmpty else { throw .invalid(path: "reason", reason: "must not be empty") }
        if let problem = WireLimits.textProblem(raw.reason) { throw .invalid(path: "reason", reason: problem) }
        return WireLocateRefusal(reason: raw.reason)
    }
}

/// The wire shape of one notice for `JSONDecoder`.
struct RawLocateNotice: Decodable {
    var id: String
    var created_at: String
    var expires_at: String
}

extension WireLocateNotice {
    /// Validates read notices; `path` names the array in errors.
    static func validated(_ raw: [RawLocateNotice], path: String) throws(WireDecodingError) -> [WireLocateNotice] {
        var out: [WireLocateNotice] = []
        out.reserveCapacity(raw.count)
        for (i, n) in raw.enumerated() {
            let p = "\(path)[\(i)]"
            out.append(
                WireLocateNotice(
                    id: try WireEnvelope.uuid(n.id, "\(p).id"), createdAt: try WireEnvelope.timestamp(n.created_at, "\(p).created_at"),
                    expiresAt: try WireEnvelope.timestamp(n.expires_at, "\(p).expires_at")))
        }
        return out
    }
}

extension WireJSONWriter {
    /// Appends a locate notice object.
    public mutating func write(_ n: WireLocateNotice) {
        raw("{\"id\":")
        string(n.id.wireString)
        raw(",\"created_at\":")
        string(n.createdAt.description)
        raw(",\"expires_at\":")
        string(n.expiresAt.description)
        raw("}")
    }

    /// Appends a JSON array of locate notices.
    public mutating func write(_ notices: [WireLocateNotice]) {
        raw("[")
        for (i, n) in notices.enumerated() {
            if i > 0 { raw(",") }
            write(n)
        }
        raw("]")
    }
}

/// Reads the small messages beside the envelope with `JSONDecoder` into their `Raw` mirrors,
/// wording its errors as `WireEnvelope.decode` does.
enum WireMessageReader {
    static func read<T: Decodable>(_ type: T.Type, _ data: Data) throws(WireDecodingError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw .malformed(WireEnvelope.describe(error))
        } catch {
            throw .malformed("\(error)")
        }
    }
}
