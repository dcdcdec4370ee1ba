import BeekonPrimitives
import Foundation
import IngestLoopback
import Testing

@testable import BeekonLoad

/// The viewers' reader of `beekon-load --viewers` and LiveBench (issue 32): the scanner that
/// finds fix ids in a stream however its reads cut it, and the fleet that reads every stream
/// with epoll(7) from a real loopback server.
@Suite("Viewer fleet (issue 32: the SSE viewers' reader)")
struct ViewerFleetTests {
    static let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }

    /// A stream as the server writes it: the answer's head, the greeting, three fix frames
    /// with a keep-alive comment and a geofence event between them.
    static let stream: [UInt8] = {
        var text = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nretry: 1000\n: beekon live stream\n\n"
        for (n, id) in ids.enumerated() {
            text += "id: \(n + 1)\nevent: fix\ndata: {\"id\":\"\(id)\",\"latitude\":52.5}\n\n"
            text += n == 0 ? ": keep-alive\n\n" : "id: \(n + 10)\nevent: geofence_event\ndata: {\"geofence\":\"home\"}\n\n"
        }
        return Array(text.utf8)
    }()

    static func key(_ id: String) -> FixKey { Array(id.utf8).withUnsafeBytes { FixKey($0) } }

    /// The ids `reads` yield, fed one read at a time.
    static func scanned(_ reads: [ArraySlice<UInt8>]) -> [FixKey] {
        var scanner = FixScanner()
        var found: [FixKey] = []
        for read in reads { read.withUnsafeBytes { scanner.feed($0, into: &found) } }
        return found
    }

    @Test("a stream cut into two reads at any byte yields each fix id once, in order")
    func everyCutInTwo() {
        let expected = Self.ids.map(Self.key)
        for cut in 0...Self.stream.count {
            let found = Self.scanned([Self.stream[..<cut], Self.stream[cut...]])
            #expect(found == expected, "cut at byte \(cut)")
        }
    }

    @Test("a stream read one byte at a time yields each fix id once, and keeps no more than a marker's length")
    func oneByteReads() {
        var scanner = FixScanner()
        var found: [FixKey] = []
        for byte in Self.stream {
            [byte].withUnsafeBytes { scanner.feed($0, into: &found) }
            #expect(scanner.carry.count < FixScanner.marker.count + 36)
        }
        #expect(found == Self.ids.map(Self.key))
    }

    @Test("reads that end between frames leave nothing carried, so the next read is scanned in place")
    func framesWholeLeaveNoCarry() {
        var scanner = FixScanner()
        var found: [FixKey] = []
        for (n, id) in Self.ids.enumerated() {
            let frame = Array("id: \(n + 1)\nevent: fix\ndata: {\"id\":\"\(id)\",\"latitude\":52.5}\n\n".utf8)
            frame.withUnsafeBytes { scanner.feed($0, into: &found) }
            #expect(scanner.carry.isEmpty, "after frame \(n + 1)")
        }
        Array(": keep-alive\n\nda".utf8).withUnsafeBytes { scanner.feed($0, into: &found) }
        #expect(scanner.carry == Array("da".utf8), "a tail that may begin a marker is kept")
        #expect(found == Self.ids.map(Self.key))
    }

    @Test("every stream of a real loopback server is answered, each fix counted once per viewer, each end seen")
    func readsEveryStream() async throws {
        let viewers = 5
        let listener = try LoopbackListener()
        defer { listener.stop() }
        listener.start { fd in
            var reader = HTTPMessageReader(fd: fd)
            guard let head = reader.readHead(), head.hasPrefix("GET /v1/live HTTP/1.1") else { return }
            // Three writes, each cutting a frame; the listener closes the connection after.
            let (a, b) = (Self.stream.count / 3, 2 * Self.stream.count / 3)
            for part in [Self.stream[..<a], Self.stream[a..<b], Self.stream[b...]] {
                guard LoopbackSocket.sendAll(fd, part) else { return }
            }
        }
        let fleet = try ViewerFleet(port: listener.port, count: viewers)
        defer { fleet.close() }
        let done = try await fleet.changes.wait(timeout: .seconds(60)) { () -> Bool? in
            fleet.received == viewers * Self.ids.count && fleet.closedByServer == viewers ? true : nil
        }
        #expect(done == true, "received \(fleet.received) fixes, \(fleet.closedByServer) streams ended")
        #expect(fleet.answered == viewers)
        for id in Self.ids {
            #expect(fleet.arrivals(of: id).count == viewers, "\(id) once at every viewer")
        }
        #expect(fleet.arrivals(of: UUID().uuidString.lowercased()).isEmpty)
    }
}
