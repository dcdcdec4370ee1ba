import NIOCore

/// How soon the listening socket accepts again after `accept` failed for want of descriptors.
///
/// NIO's server bootstrap installs an ``AcceptBackoffHandler`` that waits a whole second after
/// `EMFILE`/`ENFILE`, so that a process out of descriptors does not spin on a socket that stays
/// readable. With one client churning every connection it can at `ulimit -n 256` (benchmark
/// `AT3`), descriptors ran out for an instant now and then, and another client's new connection
/// then waited that second (1 probe in about 900 at 1.0–1.1 s). Retrying after 50 ms costs at
/// most 20 failed `accept` calls a second while descriptors stay exhausted, and another client is
/// accepted within 50 ms of one coming free.
enum AcceptBackoff {
    /// The wait after a failed `accept`.
    static let retry = TimeAmount.milliseconds(50)

    /// Replaces the bootstrap's handler in front of `serverChannel`'s accept handler.
    static func shorten(on serverChannel: any Channel) async throws {
        try await serverChannel.eventLoop.submit {
            let pipeline = serverChannel.pipeline.syncOperations
            let installed = try pipeline.handler(type: AcceptBackoffHandler.self)
            try pipeline.addHandler(
                AcceptBackoffHandler(shouldForwardIOErrorCaught: false) { _ in retry }, position: .after(installed))
            pipeline.removeHandler(installed, promise: nil)
        }.get()
    }
}
