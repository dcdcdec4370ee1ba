import Hummingbird

/// Collects a response body in memory: a refusal's JSON (a few hundred bytes) on the
/// event-driven live path, which writes it to the channel itself.
final class LiveBodyCollector: ResponseBodyWriter {
    /// The bytes written so far.
    private(set) var bytes = ByteBuffer()

    /// Appends a buffer.
    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        bytes.writeBuffer(&buffer)
    }

    /// Nothing to do: trailers are not sent on this path.
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
