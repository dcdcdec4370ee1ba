import BeekonWire
import Foundation
import Hummingbird

/// Builders for the JSON responses the server sends.
enum APIResponse {
    /// A JSON body with the given status.
    static func json(
        _ status: HTTPResponse.Status, _ bytes: [UInt8], contentType: String = "application/json",
        headers extra: HTTPFields = [:]
    ) -> Response {
        var headers = extra
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// An `Encodable` value as JSON.
    static func encode<T: Encodable>(_ status: HTTPResponse.Status, _ value: T, headers: HTTPFields = [:]) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return json(status, [UInt8](data), headers: headers)
    }

    /// An error body: `{"error": code, "message": text}`.
    static func error(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) -> Response {
        var w = WireJSONWriter(capacity: 128)
        w.raw("{\"error\":")
        w.string(code)
        w.raw(",\"message\":")
        w.string(message)
        w.raw("}")
        return json(status, w.bytes, headers: headers)
    }

    /// 401 with a `WWW-Authenticate` challenge.
    static func unauthorized(_ message: String, error code: String = "unauthorized") -> Response {
        var headers = HTTPFields()
        headers[.wwwAuthenticate] = "Bearer realm=\"beekon-ingest\""
        return error(.unauthorized, code, message, headers: headers)
    }

    /// 503 for the server's own faults, with `Retry-After` so devices back off.
    static func unavailable(_ message: String) -> Response {
        var headers = HTTPFields()
        headers[.retryAfter] = "5"
        return error(.serviceUnavailable, "unavailable", message, headers: headers)
    }
}
