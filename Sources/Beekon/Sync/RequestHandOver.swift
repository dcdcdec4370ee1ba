/// A one-shot signal from a drain's send to the preparation launched beside it: the next
/// batch's assembly waits until the current request has been handed to the transport, so
/// that on a device with one free core the request's own hops are not queued behind 11 ms of
/// assembly per 1,000 fixes (benchmark P3, pinned). Opens once; a send that ends without
/// reaching the transport (dead credentials, budget spent, shutdown) opens it as it ends.
struct RequestHandOver: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    /// A closed signal.
    init() { (stream, continuation) = AsyncStream<Void>.makeStream() }

    /// Opens the signal; later calls do nothing.
    func open() { continuation.finish() }

    /// Returns once the signal is open (at once if it already is, or if the task is cancelled).
    func wait() async {
        for await _ in stream {}
    }
}
