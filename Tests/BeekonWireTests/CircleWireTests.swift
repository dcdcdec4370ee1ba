import Foundation
import Testing

@testable import BeekonWire

/// The values of the circle messages' golden files (`Golden/messages/circle-*.json`, `person.json`).
enum CircleGolden {
    static let circle = "cir_0123456789abcdef01234567"
    static func time(_ s: String) -> WireTimestamp { WireTimestamp(wire: s)! }

    static var view: WireCircleView {
        let request = WireLocateRequestState(
            id: GoldenMessageTests.request1, installId: Fixtures.installId, state: .answered, requestedBy: "circle:" + circle,
            createdAt: time("2026-06-15T12:34:50.000Z"), expiresAt: time("2026-06-15T12:35:50.000Z"),
            pushedAt: time("2026-06-15T12:34:50.500Z"), deliveredAt: time("2026-06-15T12:34:51.000Z"),
            finishedAt: time("2026-06-15T12:34:57.000Z"), fixId: GoldenMessageTests.liveFix.location.id)
        let device = WireCircleDevice(
            installId: Fixtures.installId, status: .live, lastContactAt: time("2026-06-15T12:34:57.000Z"),
            lastFixAt: time("2026-06-15T12:34:51.500Z"), fix: GoldenMessageTests.liveFix, request: request, wake: .requested)
        return WireCircleView(
            id: circle, name: "family", createdAt: time("2026-06-15T12:00:00.000Z"), role: .owner,
            members: [
                WireCircleMember(
                    person: "alice", displayName: "Alice", role: .owner, you: true, joinedAt: time("2026-06-15T12:00:00.000Z")),
                WireCircleMember(
                    person: "bob", role: .member, joinedAt: time("2026-06-15T12:05:00.000Z"), lastSeenAt: time("2026-06-15T12:34:51.500Z"),
                    devices: [device]),
                WireCircleMember(
                    person: "carol", displayName: "Carol", role: .member, joinedAt: time("2026-06-15T12:06:00.000Z"),
                    sharing: WireCircleSharing(
                        precisionMeters: 500, hours: "07:00-19:00", timeZone: "Europe/Berlin", paused: true,
                        pausedAt: time("2026-06-15T12:20:00.000Z")), state: .paused, pausedReason: "paused",
                    pausedSince: time("2026-06-15T12:20:00.000Z")),
            ])
    }

    static func expected(_ m: WireMessage) -> AnyHashable {
        switch m {
        case .person: return WirePerson(person: "alice", displayName: "Alice")
        case .circleList:
            return WireCircleList(
                circles: [
                    WireCircleSummary(id: circle, name: "family", createdAt: time("2026-06-15T12:00:00.000Z")),
                    WireCircleSummary(
                        id: "cir_89abcdef0123456789abcdef", name: "Ski \"club\" ⛷", createdAt: time("2026-06-14T08:30:00.250Z")),
                ], truncated: true)
        case .circleCreate: return WireCircleCreate(name: "family")
        case .circleView: return view
        case .circleInvitation:
            return WireCircleInvitation(
                code: "bci1.c2VjcmV0LWludml0YXRpb24tY29kZQ", id: "inv_5f2c1e0a9b8d7c6e5f4a3b2c", circleId: circle,
                expiresAt: time("2026-06-22T12:00:00.000Z"))
        case .circleInvitationRequest: return WireCircleInvitationRequest(expiresInSeconds: 86_400)
        case .circleJoinRequest: return WireCircleJoinRequest(code: "bci1.c2VjcmV0LWludml0YXRpb24tY29kZQ")
        case .circleJoin: return WireCircleJoin(circleId: circle, joined: true)
        case .circleSharing: return WireCircleSharing(precisionMeters: 1000, hours: "07:00-19:00", timeZone: "Europe/Berlin")
        default: return AnyHashable(m)
        }
    }
}

/// The circle messages (issue 52): one codec each, shared by the server and the SDK's circle client.
@Suite("Circle messages")
struct CircleWireTests {
    static func golden(_ m: WireMessage) throws -> String { String(decoding: try GoldenMessageTests.golden(m), as: UTF8.self) }

    @Test("a circle view reads its devices' fixes and requests with their own messages' readers")
    func nestedMessagesUseTheirOwnReaders() throws {
        let view = try WireCircleView.decode(GoldenMessageTests.golden(.circleView))
        let device = try #require(view.members.first { $0.person == "bob" }?.devices.first)
        #expect(device.fix == GoldenMessageTests.liveFix)
        #expect(device.request?.state == .answered && device.request?.fixId == device.fix?.location.id)
        #expect(view.you?.person == "alice")
        // A fix that breaks schema v1 inside the view is refused, and the error names where.
        let text = try Self.golden(.circleView)
        let bad = text.replacingOccurrences(of: #""latitude":37.775"#, with: #""latitude":91"#)
        #expect(bad != text)
        do {
            _ = try WireCircleView.decode(Data(bad.utf8))
            Issue.record("a latitude of 91 was accepted")
        } catch {
            guard case .invalid(let path, _) = error else { throw error }
            #expect(path.hasPrefix("members[1].devices[0].fix"), "\(path)")
        }
        let badRequest = text.replacingOccurrences(of: #""state":"answered""#, with: #""state":"asleep""#)
        #expect(throws: WireDecodingError.self) { try WireCircleView.decode(Data(badRequest.utf8)) }
    }

    @Test("the readers refuse what breaks the circle messages' contract")
    func brokenCircleMessagesAreRefused() throws {
        let view = try Self.golden(.circleView)
        let bad: [(WireMessage, String)] = [
            (.circleView, view.replacingOccurrences(of: #""state":"paused""#, with: #""state":"sleeping""#)),
            (.circleView, view.replacingOccurrences(of: #""role":"owner","members""#, with: #""role":"boss","members""#)),
            (.circleView, view.replacingOccurrences(of: #""wake":"requested""#, with: #""wake":"shouted""#)),
            (.circleView, view.replacingOccurrences(of: "cir_0123456789abcdef01234567\",\"name", with: "cir_XYZ\",\"name")),
            (.circleView, view.replacingOccurrences(of: #""joined_at":"2026-06-15T12:05:00.000Z""#, with: #""joined_at":"noon""#)),
            (
                .circleView,
                view.replacingOccurrences(
                    of: #""install_id":"0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff","status""#, with: #""install_id":"x","status""#)
            ),
            (.circleList, #"{"circles":[{"id":"cir_0123456789abcdef01234567","name":"","created_at":"2026-06-15T12:00:00.000Z"}]}"#),
            (.circleList, #"{"circles":null}"#),
            (.circleCreate, #"{"name":""}"#),
            (.circleInvitation, #"{"code":"c","id":"inv_1","circle_id":"nope","expires_at":"2026-06-22T12:00:00.000Z"}"#),
            (.circleJoinRequest, #"{"code":""}"#),
            (.circleInvitationRequest, #"{"expires_in_seconds":0}"#),
            (.circleJoin, #"{"circle_id":"cir_0123456789abcdef01234567"}"#),
            (.circleSharing, #"{"precision_m":-5,"paused":false}"#),
            (.circleSharing, #"{"precision_m":"far"}"#),
            (.person, #"{"person":"","display_name":null}"#),
        ]
        for (m, text) in bad {
            #expect(throws: (any Error).self, "\(m) accepted \(text)") { try GoldenMessageTests.roundTrip(m, Data(text.utf8)) }
        }
    }

    @Test("a sharing request may leave every rule out; it reads as everything, all day, not paused")
    func sharingDefaults() throws {
        #expect(try WireCircleSharing.decode(Data("{}".utf8)) == WireCircleSharing())
        let paused = WireCircleSharing(paused: true)
        #expect(
            String(decoding: paused.encoded(), as: UTF8.self)
                == #"{"precision_m":null,"hours":null,"time_zone":null,"paused":true,"paused_at":null}"#)
        #expect(try WireCircleSharing.decode(paused.encoded()) == paused)
        // An admin's create names the owner; a person's leaves it out.
        #expect(String(decoding: WireCircleCreate(name: "x", owner: "dave").encoded(), as: UTF8.self) == #"{"name":"x","owner":"dave"}"#)
        #expect(String(decoding: WireCircleList(circles: []).encoded(), as: UTF8.self) == #"{"circles":[]}"#)
    }

    @Test("a circle stream's events: circle first, then the live stream's kinds; an unknown name is skipped")
    func circleLiveEvents() throws {
        let circle = try #require(try WireCircleLiveEvent.decode(event: "circle", data: GoldenMessageTests.golden(.circleView)))
        #expect(circle == .circle(CircleGolden.view) && circle.name == "circle")
        #expect(String(decoding: circle.encoded(), as: UTF8.self) == (try Self.golden(.circleView)))
        let fix = try #require(try WireCircleLiveEvent.decode(event: "fix", data: GoldenMessageTests.golden(.liveFix)))
        #expect(fix == .live(.fix(GoldenMessageTests.liveFix)) && fix.name == "fix")
        #expect(try WireCircleLiveEvent.decode(event: "weather", data: Data("{}".utf8)) == nil)
        #expect(throws: WireDecodingError.self) { try WireCircleLiveEvent.decode(event: "circle", data: Data("{}".utf8)) }
    }
}
