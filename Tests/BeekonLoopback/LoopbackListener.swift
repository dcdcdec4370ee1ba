import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one accept loop of this repository's fake servers and proxies: a listening socket
/// on 127.0.0.1 whose connections are each served on their own thread and closed when
/// `serve` returns. A connection is closed only by its thread, under the lock `stop()`
/// shuts the open ones down under, and the listener only by the loop once `accept()`
/// failed: nothing ever touches a socket number another test may have reused.
/// Shared with the Server package through a symlink.
public final class LoopbackListener: @unchecked Sendable {
    /// The port the OS picked.
    public let port: Int
    private let listenFD: Int32
    private let lock = NSLock()
    private var open: Set<Int32> = []
    private var stopped = false

    /// Listens; nothing is accepted before `start(_:)`.
    public init(backlog: Int32 = 64) throws(LoopbackSocket.Failure) {
        (listenFD, port) = try LoopbackSocket.listen(backlog: backlog)
    }

    deinit { stop() }

    /// Accepts connections on a thread of its own; `serve` runs on a new thread per
    /// connection (shut down and closed when it returns).
    public func start(_ serve: @escaping @Sendable (Int32) -> Void) {
        Thread { [self] in
            while let fd = LoopbackSocket.accept(listenFD) {
                let keep: Bool = lock.withLock {
                    guard !stopped else { return false }
                    open.insert(fd)
                    return true
                }
                guard keep else {
                    close(fd)
                    break
                }
                Thread { [self] in
                    serve(fd)
                    lock.withLock {
                        _ = open.remove(fd)
                        shutdown(fd, Int32(SHUT_RDWR))
                        close(fd)
                    }
                }.start()
            }
            close(listenFD)  // once accept() has failed (stop() only shuts it down)
        }.start()
    }

    /// Shuts every open connection and the listener down (the accept loop then closes it).
    /// Returns false when it was already stopped.
    @discardableResult
    public func stop() -> Bool {
        let first: Bool = lock.withLock {
            guard !stopped else { return false }
            stopped = true
            for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        if first { shutdown(listenFD, Int32(SHUT_RDWR)) }
        return first
    }
}
