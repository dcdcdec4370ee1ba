import BeekonPrimitives
import Foundation
import Beekon

/// The NMEA side of a `ReconnectingReader`: a device opened by `SerialPort`,
/// its bytes fed to an `NMEAParser`. Used by one reader thread at a time.
final class NMEASerialSource: ByteSource, @unchecked Sendable {
    let path: String
    let baud: Int
    let settle: Double
    private struct State {
        var parser = NMEAParser()
        var kind: SerialPort.Kind?
        var lastBytes: Double = 0
        var opens = 0
    }
    private let state = Locked(State())

    init(path: String, baud: Int, settle: Double) {
        self.path = path
        self.baud = baud
        self.settle = settle
    }

    var name: String { "NMEA device \(path)" }
    var endOfFileFinishes: Bool { state.withLock { $0.kind == .file } }
    var diagnostics: TrackDiagnostics { state.withLock { $0.parser.diagnostics } }
    var opens: Int { state.withLock { $0.opens } }

    func open() throws(ByteSourceError) -> Int32 {
        let (fd, kind) = try SerialPort.open(path, baud: baud)
        state.withLock {
            $0.kind = kind
            $0.opens += 1
        }
        return fd
    }

    /// A plain NMEA stream has no standard power command: every mode reads the same.
    func apply(_ mode: PowerMode, fd: Int32) throws(ByteSourceError) {}

    func consume(_ bytes: ArraySlice<UInt8>, now: Double) -> [RawFix] {
        state.withLock { s in
            s.lastBytes = now
            return s.parser.feed(bytes)
        }
    }

    func idle(now: Double) -> [RawFix] {
        state.withLock { s in now - s.lastBytes >= settle ? s.parser.flushOpenEpoch() : [] }
    }

    /// Ends a partial line (the next open starts clean) and emits the open epoch.
    func closed() -> [RawFix] {
        state.withLock { $0.parser.finish() }
    }
}
