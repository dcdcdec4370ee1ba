import BeekonSources
import BeekonWire
import Foundation
import Testing

/// Issue 31, the SDK side of the live stream's golden files (`Tests/BeekonWireTests/Golden/messages/live-*.json`):
/// each, framed as the server frames it, goes through the SSE parser `LiveViewer` uses and comes
/// out as its typed event, which writes the same bytes again. The server's tests check that it
/// writes these bytes (`WireGoldenServerTests`) and read a real stream through `LiveViewer`.
@Suite("Live events (golden)")
struct LiveEventGoldenTests {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../BeekonWireTests/Golden/messages").standardizedFileURL

    static let cases: [(WireMessage, String)] = [
        (.liveFix, "fix"), (.liveGeofenceEvent, "geofence_event"), (.liveDevice, "device"), (.liveLocate, "locate"),
        (.liveReset, "reset"),
    ]

    static func golden(_ m: WireMessage) throws -> Data {
        try Data(contentsOf: dir.appendingPathComponent("\(m.rawValue).json"))
    }

    /// The viewer's events for one SSE frame of `name` with `data`.
    static func viewerEvents(_ name: String, _ data: Data) -> [LiveViewerEvent] {
        var parser = SSEParser()
        let frame = Data("id: 7\nevent: \(name)\ndata: ".utf8) + data + Data("\n\n".utf8)
        return parser.feed(frame).map { LiveViewerEvent.message($0) }
    }

    @Test("issue 31, BY-1: every live event's golden file reads as its typed event through the viewer's parser")
    func goldenEventsDecodeTyped() throws {
        for (m, name) in Self.cases {
            let data = try Self.golden(m)
            let events = Self.viewerEvents(name, data)
            #expect(events.count == 1, "\(m)")
            let typed = try #require(events.first?.liveEvent, "\(m) did not decode")
            #expect(typed.name == name)
            #expect(String(decoding: typed.encoded(), as: UTF8.self) == String(decoding: data, as: UTF8.self), "\(m)")
        }
    }

    @Test("issue 31: the typed values carry the golden files' fields")
    func typedFields() throws {
        let install = UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff")!
        guard case .fix(let fix)? = Self.viewerEvents("fix", try Self.golden(.liveFix)).first?.liveEvent else {
            Issue.record("not a fix")
            return
        }
        #expect(fix.installId == install && fix.location.latitude == 37.775 && fix.location.privacyZone == "home")
        #expect(fix.location.locateRequestId == UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071"))
        guard case .device(let device)? = Self.viewerEvents("device", try Self.golden(.liveDevice)).first?.liveEvent else {
            Issue.record("not a device event")
            return
        }
        #expect(device.status == .delayed && device.expectedIntervalSeconds == 300 && device.lastFixAt != nil)
        guard case .locate(let locate)? = Self.viewerEvents("locate", try Self.golden(.liveLocate)).first?.liveEvent else {
            Issue.record("not a locate event")
            return
        }
        #expect(locate.state == .answered && locate.pushedAt == nil && locate.fixId == fix.location.id)
        guard case .reset(let reset)? = Self.viewerEvents("reset", try Self.golden(.liveReset)).first?.liveEvent else {
            Issue.record("not a reset")
            return
        }
        #expect(reset == WireLiveReset(reason: .beyondRetention, head: 42))
    }

    @Test("issue 31: an unknown event kind, a heartbeat and a broken payload have no typed event; the raw message stays")
    func untypedEvents() throws {
        let unknown = Self.viewerEvents("weather", Data(#"{"rain":true}"#.utf8))
        #expect(unknown.count == 1 && unknown[0].liveEvent == nil)
        #expect(try { if case .message(let m) = unknown[0] { return try m.liveEvent() } else { return nil } }() == nil)
        #expect(LiveViewerEvent.heartbeat.liveEvent == nil)
        let broken = Self.viewerEvents("fix", Data(#"{"id":"x"}"#.utf8))
        #expect(broken.first?.liveEvent == nil)
        guard case .message(let m)? = broken.first else {
            Issue.record("no message")
            return
        }
        #expect(throws: WireDecodingError.self) { try m.liveEvent() }
    }
}
