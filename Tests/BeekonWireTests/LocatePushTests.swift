import BeekonWire
import Foundation
import Testing

/// The silent-push contract for locate requests (BY-2), both shapes, exactly as the server's
/// APNs/FCM sender encodes them.
@Suite("WireLocatePush")
struct LocatePushTests {
    let id = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071")!

    @Test("BY-2: the APNs payload parses from userInfo and from JSON")
    func apns() throws {
        let json = #"{"aps":{"content-available":1},"beekon":{"type":"locate","locate_request_id":"0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071"}}"#
        #expect(WireLocatePush(json: Data(json.utf8))?.locateRequestID == id)
        let userInfo: [AnyHashable: Any] = [
            "aps": ["content-available": 1], "beekon": ["type": "locate", "locate_request_id": id.wireString],
        ]
        #expect(WireLocatePush(userInfo: userInfo)?.locateRequestID == id)
        #expect(WireLocatePush(locateRequestID: id).apnsPayload == Data(json.utf8), "the sender's bytes are the contract's")
    }

    @Test("BY-2: the FCM data message parses, string values only")
    func fcm() {
        let data: [AnyHashable: Any] = ["beekon_type": "locate", "beekon_locate_request_id": id.wireString]
        #expect(WireLocatePush(userInfo: data)?.locateRequestID == id)
        #expect(WireLocatePush(locateRequestID: id).fcmData == ["beekon_type": "locate", "beekon_locate_request_id": id.wireString])
        let json = try! JSONSerialization.data(withJSONObject: WireLocatePush(locateRequestID: id).fcmData)
        #expect(WireLocatePush(json: json)?.locateRequestID == id)
    }

    @Test("BY-2: anything else is not ours")
    func notOurs() {
        let bad: [[AnyHashable: Any]] = [
            [:],
            ["aps": ["alert": "Dinner is ready"]],
            ["beekon": ["type": "wipe", "locate_request_id": id.wireString]],
            ["beekon": ["type": "locate", "locate_request_id": "not-a-uuid"]],
            ["beekon": ["type": "locate", "locate_request_id": 42]],
            ["beekon_type": "locate"],
            ["beekon_type": "other", "beekon_locate_request_id": id.wireString],
        ]
        for payload in bad { #expect(WireLocatePush(userInfo: payload) == nil, "\(payload)") }
        #expect(WireLocatePush(json: Data("not json".utf8)) == nil)
        #expect(WireLocatePush(json: Data("[1]".utf8)) == nil)
    }
}
