import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing to the terminal or a pipe: progress lines, errors.
enum Terminal {
    static var stdoutIsTTY: Bool { isatty(STDOUT_FILENO) == 1 }

    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Overwrites the current terminal line (TTY only).
    static func status(_ line: String) {
        FileHandle.standardOutput.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    static func error(_ line: String) {
        FileHandle.standardError.write(Data(("beekon: " + line + "\n").utf8))
    }
}

/// Delivers SIGINT/SIGTERM as values instead of killing the process.
final class SignalWatcher: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    let signals: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation

    init(_ numbers: [Int32] = [SIGINT, SIGTERM]) {
        (signals, continuation) = AsyncStream.makeStream()
        let queue = DispatchQueue(label: "beekon.signals")
        for n in numbers {
            signal(n, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: n, queue: queue)
            source.setEventHandler { [continuation] in continuation.yield(n) }
            source.resume()
            sources.append(source)
        }
    }
}
