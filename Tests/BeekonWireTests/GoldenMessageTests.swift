import Foundation
import Testing

@testable import BeekonWire

/// Issue 31: every SDK↔server message is a type of this module, and its golden file
/// (`Golden/messages/<message>.json`) decodes to the expected value and encodes back to the
/// same bytes. The server's tests read the same files (`WireGoldenServerTests`).
@Suite("Golden messages")
struct GoldenMessageTests {
    static let request1 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071")!
    static let request2 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6072")!
    static let notice1 = WireLocateNotice(
        id: request1, createdAt: WireTimestamp(wire: "2026-06-15T12:34:50.000Z")!,
        expiresAt: WireTimestamp(wire: "2026-06-15T12:35:50.000Z")!)
    static let notice2 = WireLocateNotice(
        id: request2, createdAt: WireTimestamp(wire: "2026-06-15T12:34:55.123Z")!,
        expiresAt: WireTimestamp(wire: "2026-06-15T12:35:55.123Z")!)
    static let apnsToken = "00ff10a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2"

    static func golden(_ m: WireMessage) throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: m.goldenFileName, withExtension: nil, subdirectory: "Golden/messages"),
            "missing golden file Golden/messages/\(m.goldenFileName)")
        return try Data(contentsOf: url)
    }

    /// Decodes `data` as `m` and encodes the value again, with this module's own code.
    static func roundTrip(_ m: WireMessage, _ data: Data) throws -> (value: AnyHashable, bytes: Data) {
        switch m {
        case .envelope:
            let v = try WireEnvelope.decode(data)
            return (v, WireJSONWriter.encode(v))
        case .ingestAnswer:
            let v = try WireIngestAnswer.decode(data)
            return (v, v.encoded())
        case .commands:
            let v = try WireCommands.decode(data)
            return (v, v.encoded())
        case .locateRefusal:
            let v = try WireLocateRefusal.decode(data)
            return (v, v.encoded())
        case .pushTokenAPNs, .pushTokenFCM:
            let v = try WirePushTokenRegistration.decode(data)
            return (v, v.encoded())
        case .locatePushAPNs:
            let v = try #require(WireLocatePush(json: data))
            return (v, v.apnsPayload)
        case .liveFix, .liveGeofenceEvent, .liveDevice, .liveLocate, .liveReset:
            let v = try #require(try WireLiveEvent.decode(event: liveEventName(m), data: data))
            return (v, v.encoded())
        case .tokenRefresh, .tokenEnrollment:
            let v = try WireTokenRequest.decode(data, contentType: m.mediaType)
            return (v, v.formEncoded())
        case .tokenGrant:
            let v = try WireTokenGrant.decode(data)
            return (v, v.encoded())
        case .person:
            let v = try WirePerson.decode(data)
            return (v, v.encoded())
        case .circleList:
            let v = try WireCircleList.decode(data)
            return (v, v.encoded())
        case .circleCreate:
            let v = try WireCircleCreate.decode(data)
            return (v, v.encoded())
        case .circleView:
            let v = try WireCircleView.decode(data)
            return (v, v.encoded())
        case .circleInvitationRequest:
            let v = try WireCircleInvitationRequest.decode(data)
            return (v, v.encoded())
        case .circleInvitation:
            let v = try WireCircleInvitation.decode(data)
            return (v, v.encoded())
        case .circleJoinRequest:
            let v = try WireCircleJoinRequest.decode(data)
            return (v, v.encoded())
        case .circleJoin:
            let v = try WireCircleJoin.decode(data)
            return (v, v.encoded())
        case .circleSharing:
            let v = try WireCircleSharing.decode(data)
            return (v, v.encoded())
        }
    }

    /// The SSE `event:` name of a live-event message.
    static func liveEventName(_ m: WireMessage) -> String {
        switch m {
        case .liveFix: return "fix"
        case .liveGeofenceEvent: return "geofence_event"
        case .liveDevice: return "device"
        case .liveLocate: return "locate"
        default: return "reset"
        }
    }

    /// The manual fix of the golden envelope, as the live stream shows it once received.
    static var liveFix: WireViewerFix {
        var manual = WireLocation(
            id: UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22")!, timestamp: WireTimestamp(wire: "2026-06-15T12:34:51.500Z")!,
            trigger: .manual, motion: .stationary, latitude: 37.775, longitude: -122.42, accuracy: 35, privacyZone: "home")
        manual.locateRequestId = request1
        return WireViewerFix(
            location: manual, sessionId: Fixtures.sessionId, installId: Fixtures.installId, batchId: Fixtures.batchId,
            receivedAt: receivedAt)
    }

    static let receivedAt = WireTimestamp(wire: "2026-06-15T12:34:57.000Z")!

    /// The value each golden file holds.
    static func expected(_ m: WireMessage) -> AnyHashable {
        switch m {
        case .envelope:
            let id = { (s: String) in UUID(uuidString: s)! }
            var manual = WireLocation(
                id: id("0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22"), timestamp: WireTimestamp(wire: "2026-06-15T12:34:51.500Z")!,
                trigger: .manual, motion: .stationary, latitude: 37.775, longitude: -122.42, accuracy: 35, privacyZone: "home")
            manual.locateRequestId = request1
            var e = WireEnvelope(
                batchId: Fixtures.batchId, sessionId: Fixtures.sessionId, sentAt: Fixtures.sentAt,
                device: WireDevice(
                    installId: Fixtures.installId, platform: "linux", sdkVersion: "0.1.1", model: "Raspberry Pi 5",
                    syncIntervalSeconds: 300, checkInIntervalSeconds: 900),
                extras: ["trip": "morning-commute"], locations: [GoldenCases.fullLocation, manual],
                geofenceEvents: [WireGeofenceEvent(id: Fixtures.eventId, geofenceId: "home", type: .enter, timestamp: Fixtures.fixTime)])
            e.proximityEvents = [
                WireProximityEvent(
                    id: id("0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e23"), region: "lobby", uuid: id("f7826da6-4fa2-4e98-8024-bc5b71e0893e"),
                    major: 1, minor: 42, scanner: "pi-hall", type: .enter, timestamp: WireTimestamp(wire: "2026-06-15T12:34:20.250Z")!,
                    distance: 1.5)
            ]
            return e
        case .ingestAnswer:
            return WireIngestAnswer(
                duplicateBatch: false, locationsStored: 3, locationsDuplicate: 1, eventsStored: 1, eventsDuplicate: 0,
                locateRequests: [notice1, notice2])
        case .commands: return WireCommands(locateRequests: [notice1])
        case .locateRefusal: return WireLocateRefusal(reason: "sharing_off")
        case .pushTokenAPNs: return WirePushTokenRegistration.apns(token: apnsToken, environment: .sandbox, topic: "com.example.beekon")
        case .pushTokenFCM: return WirePushTokenRegistration.fcm(token: "fcm:APA91b-Example_token.1")
        case .locatePushAPNs: return WireLocatePush(locateRequestID: request1)
        case .liveFix: return WireLiveEvent.fix(liveFix)
        case .liveGeofenceEvent:
            return WireLiveEvent.geofenceEvent(
                WireViewerGeofenceEvent(
                    event: WireGeofenceEvent(id: Fixtures.eventId, geofenceId: "home", type: .enter, timestamp: Fixtures.fixTime),
                    installId: Fixtures.installId, sessionId: Fixtures.sessionId, batchId: Fixtures.batchId, receivedAt: receivedAt))
        case .liveDevice:
            return WireLiveEvent.device(
                WireDeviceStatusEvent(
                    installId: Fixtures.installId, status: .delayed, lastContactAt: receivedAt,
                    lastFixAt: WireTimestamp(wire: "2026-06-15T12:34:51.500Z")!, expectedIntervalSeconds: 300,
                    at: WireTimestamp(wire: "2026-06-15T12:44:55.000Z")!))
        case .liveLocate:
            return WireLiveEvent.locate(
                WireLocateRequestState(
                    id: request1, installId: Fixtures.installId, state: .answered, requestedBy: "admin", createdAt: notice1.createdAt,
                    expiresAt: notice1.expiresAt, deliveredAt: WireTimestamp(wire: "2026-06-15T12:34:51.000Z")!, finishedAt: receivedAt,
                    fixId: liveFix.location.id))
        case .liveReset: return WireLiveEvent.reset(WireLiveReset(reason: .beyondRetention, head: 42))
        case .tokenRefresh: return WireTokenRequest.refresh(refreshToken: "brt1.Zm9vYmFyYmF6LXJlZnJlc2g")
        case .tokenEnrollment: return WireTokenRequest.enrollment(code: "ben1.c2VjcmV0LWNvZGU", installId: Fixtures.installId)
        case .tokenGrant:
            return WireTokenGrant(
                accessToken: "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXZpY2UifQ.c2lnbmF0dXJl",
                refreshToken: "brt1.bmV4dC1yZWZyZXNoLXRva2Vu", expiresIn: 900)
        default: return CircleGolden.expected(m)
        }
    }

    @Test("issue 31: each message's golden file decodes to its value and encodes back byte for byte", arguments: WireMessage.allCases)
    func goldenRoundTrip(_ m: WireMessage) throws {
        let data = try Self.golden(m)
        let (value, bytes) = try Self.roundTrip(m, data)
        #expect(value == Self.expected(m))
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: data, as: UTF8.self))
    }

    @Test("issue 31: a member the reader does not know is ignored (must-ignore)", arguments: WireMessage.allCases)
    func unknownMembersAreIgnored(_ m: WireMessage) throws {
        // The push-token registration is the exception: its contract allows no other members.
        let data = try Self.golden(m)
        let widened =
            m.mediaType == "application/json"
            ? Data(#"{"x_future":[1,{"a":null}],"#.utf8) + data.dropFirst() : Data("x_future=1&".utf8) + data
        if m == .pushTokenAPNs || m == .pushTokenFCM {
            #expect(throws: WireDecodingError.self) { try WirePushTokenRegistration.decode(widened) }
        } else {
            #expect(try Self.roundTrip(m, widened).value == Self.expected(m))
        }
    }

    @Test("issue 31: the readers refuse what breaks the contract")
    func brokenMessagesAreRefused() {
        let bad: [(WireMessage, String)] = [
            (.ingestAnswer, #"{"locations_stored":1,"locate_requests":[]}"#),
            (
                .ingestAnswer,
                #"{"duplicate_batch":false,"locations_stored":-1,"locations_duplicate":0,"events_stored":0,"events_duplicate":0}"#
            ),
            (
                .ingestAnswer,
                #"{"duplicate_batch":false,"locations_stored":1,"locations_duplicate":0,"events_stored":0,"events_duplicate":0,"locate_requests":[{"id":"nope","created_at":"2026-06-15T12:34:50.000Z","expires_at":"2026-06-15T12:35:50.000Z"}]}"#
            ),
            (.commands, #"{"locate_requests":null}"#),
            (
                .commands,
                #"{"locate_requests":[{"id":"0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071","created_at":"yesterday","expires_at":"2026-06-15T12:35:50.000Z"}]}"#
            ),
            (.locateRefusal, #"{"outcome":"answered","reason":"x"}"#),
            (.locateRefusal, #"{"outcome":"refused","reason":""}"#),
            (.locateRefusal, #"{"outcome":"refused"}"#),
            (.pushTokenAPNs, #"{"provider":"apns","token":"zz","environment":"sandbox","topic":"a.b"}"#),
            (.pushTokenAPNs, #"{"provider":"apns","token":"\#(Self.apnsToken)","environment":"staging","topic":"a.b"}"#),
            (.pushTokenAPNs, #"{"provider":"apns","token":"\#(Self.apnsToken)","environment":"sandbox"}"#),
            (.pushTokenFCM, #"{"provider":"fcm","token":"has space"}"#),
            (.pushTokenFCM, #"{"provider":"webpush","token":"x"}"#),
            (.pushTokenFCM, "[]"),
            (.liveFix, #"{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22"}"#),
            (
                .liveGeofenceEvent,
                #"{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e21","geofence_id":"home","type":"enter","timestamp":"2026-06-15T12:34:10.000Z"}"#
            ),
            (
                .liveDevice,
                #"{"install_id":"0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff","status":"asleep","last_contact_at":"2026-06-15T12:34:57.000Z","expected_interval_seconds":300,"at":"2026-06-15T12:44:55.000Z"}"#
            ),
            (.liveLocate, #"{"id":"0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071","state":"answered"}"#),
            (.liveReset, #"{"reason":"bored","head":1}"#),
            (.tokenRefresh, "grant_type=refresh_token&refresh_token="),
            (.tokenRefresh, "grant_type=password&username=a"),
            (.tokenEnrollment, "grant_type=enrollment_code&code=x&install_id=nope"),
            (.tokenEnrollment, "grant_type=enrollment_code&install_id=0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff"),
            (.tokenGrant, #"{"access_token":"a","expires_in":900,"token_type":"Bearer"}"#),
            (.tokenGrant, #"{"access_token":"","expires_in":900,"refresh_token":"r","token_type":"Bearer"}"#),
            (.tokenGrant, #"{"access_token":"a","expires_in":-1,"refresh_token":"r","token_type":"Bearer"}"#),
        ]
        for (m, text) in bad {
            #expect(throws: (any Error).self, "\(m) accepted \(text)") { try Self.roundTrip(m, Data(text.utf8)) }
        }
    }

    @Test("issue 31: an answer from a server without a locate channel omits locate_requests")
    func ingestAnswerWithoutLocateChannel() throws {
        let a = WireIngestAnswer(duplicateBatch: true, locationsStored: 0, locationsDuplicate: 0, eventsStored: 0, eventsDuplicate: 0)
        let text = String(decoding: a.encoded(), as: UTF8.self)
        #expect(
            text == #"{"duplicate_batch":true,"locations_stored":0,"locations_duplicate":0,"events_stored":0,"events_duplicate":0}"#)
        #expect(try WireIngestAnswer.decode(a.encoded()) == a)
        // An empty list is written: the server has a channel and nothing is open.
        var empty = a
        empty.locateRequests = []
        #expect(String(decoding: empty.encoded(), as: UTF8.self).hasSuffix(#","locate_requests":[]}"#))
    }

    @Test("issue 31: an APNs registration carries the device token in lowercase hex")
    func apnsDeviceTokenIsHex() throws {
        let token = Data([0x00, 0xFF, 0x10, 0xA0] + (0..<28).map { UInt8($0) })
        let r = WirePushTokenRegistration.apns(deviceToken: token, environment: .production, topic: "a.b")
        #expect(
            r == .apns(token: "00ff10a0" + (0..<28).map { String(format: "%02x", $0) }.joined(), environment: .production, topic: "a.b"))
        // Upper-case hex is read, as lowercase.
        let upper = Data(
            #"{"provider":"apns","token":"\#(Self.apnsToken.uppercased())","environment":"sandbox","topic":"com.example.beekon"}"#.utf8)
        #expect(try WirePushTokenRegistration.decode(upper) == Self.expected(.pushTokenAPNs) as? WirePushTokenRegistration)
    }

    @Test("issue 31: a nested location is read by the envelope's own validation")
    func nestedLocationIsValidated() throws {
        struct Holder: Decodable { var fix: WireLocation }
        let ok =
            #"{"fix":{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e20","timestamp":"2026-06-15T12:34:10.000Z","trigger":"interval","motion":"moving","is_mock":false,"latitude":1,"longitude":2,"x":3}}"#
        #expect(try JSONDecoder().decode(Holder.self, from: Data(ok.utf8)).fix.latitude == 1)
        let bad = ok.replacingOccurrences(of: #""latitude":1"#, with: #""latitude":91"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Holder.self, from: Data(bad.utf8)) }
    }

    @Test("issue 31: a live fix that breaks schema v1 is refused; a coarsened fix (no speed or bearing) is read")
    func liveFixIsValidated() throws {
        let golden = String(decoding: try Self.golden(.liveFix), as: UTF8.self)
        let bad = golden.replacingOccurrences(of: #""latitude":37.775"#, with: #""latitude":91"#)
        #expect(throws: WireDecodingError.self) { try WireViewerFix.decode(Data(bad.utf8)) }
        var coarse = Self.liveFix
        coarse.location.latitude = 37.8
        coarse.location.accuracy = 1000
        #expect(try WireViewerFix.decode(coarse.encoded()) == coarse)
    }

    @Test("issue 31: a live event name this version does not know is skipped, not an error")
    func unknownLiveEventIsSkipped() throws {
        #expect(try WireLiveEvent.decode(event: "weather", data: Data("{}".utf8)) == nil)
        for m in [WireMessage.liveFix, .liveGeofenceEvent, .liveDevice, .liveLocate, .liveReset] {
            let event = try #require(try WireLiveEvent.decode(event: Self.liveEventName(m), data: Self.golden(m)))
            #expect(event.name == Self.liveEventName(m))
            #expect(WireLiveEvent.names.contains(event.name))
        }
    }

    @Test("issue 31: a token request is read as JSON too (strings; numbers as their text), and the refusals name the field")
    func tokenRequestAsJSON() throws {
        let json = Data(#"{"grant_type":"enrollment_code","code":"c1","install_id":"0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff","n":3}"#.utf8)
        #expect(try WireTokenRequest.decode(json, contentType: nil) == .enrollment(code: "c1", installId: Fixtures.installId))
        #expect(
            try WireTokenRequest.decode(Data(#"{"grant_type":"refresh_token","refresh_token":"r"}"#.utf8), contentType: "application/json")
                == .refresh(refreshToken: "r"))
        #expect(throws: WireDecodingError.invalid(path: "grant_type", reason: "grant_type must be refresh_token or enrollment_code")) {
            try WireTokenRequest.decode(Data("grant_type=client_credentials".utf8), contentType: nil)
        }
        #expect(throws: WireDecodingError.invalid(path: "refresh_token", reason: "refresh_token is missing")) {
            try WireTokenRequest.decode(Data("grant_type=refresh_token".utf8), contentType: nil)
        }
        // Form escapes: space as +, reserved bytes as %XX, both ways.
        let odd = WireTokenRequest.refresh(refreshToken: "a b/c+d=é")
        #expect(String(decoding: odd.formEncoded(), as: UTF8.self) == "grant_type=refresh_token&refresh_token=a+b%2Fc%2Bd%3D%C3%A9")
        #expect(try WireTokenRequest.decode(odd.formEncoded(), contentType: nil) == odd)
    }
}
