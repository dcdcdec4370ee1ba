import Foundation
import Testing

@testable import BeekonWire

/// U+0000 in any free-text field is refused with a 422-class error naming the field, by the
/// fast reader and the general reader alike: SQLite would store it and PostgreSQL's `text`
/// cannot, so without the rule the same upload was a 200 on one store and a 503 on the other.
@Suite("Free text: U+0000 is refused everywhere")
struct TextFieldTests {
    static var fields: [(path: [Any], name: String)] {
        [
            (["device", "platform"], "device.platform"),
            (["device", "model"], "device.model"),
            (["device", "sdk_version"], "device.sdk_version"),
            (["locations", 0, "privacy_zone"], "locations[0].privacy_zone"),
            (["geofence_events", 0, "geofence_id"], "geofence_events[0].geofence_id"),
            (["extras", "trip"], "extras.trip"),
        ]
    }

    @Test(arguments: ["nul\u{0}inside", "\u{0}", "end\u{0}"])
    func everyTextFieldRefusesNUL(_ text: String) throws {
        for field in Self.fields {
            let data = try body(set: field.path, to: text)
            #expect(decodeError(data) == .invalid(path: field.name, reason: "must not contain U+0000"), "\(field.name)")
            #expect(throws: WireDecodingError.self) { try WireEnvelope.decodeWithJSONDecoder(data) }
        }
        let key = try body(set: ["extras", "nul\u{0}key"], to: "v")
        #expect(decodeError(key) == .invalid(path: "extras", reason: "a key must not contain U+0000"))
    }

    @Test func otherControlCharactersAreStillText() throws {
        let e = try WireEnvelope.decode(try body(set: ["device", "model"], to: "tab\tline\n\u{1B}"))
        #expect(e.device.model == "tab\tline\n\u{1B}")
    }

    @Test func aLocateRefusalReasonRefusesNUL() {
        #expect(throws: WireDecodingError.invalid(path: "reason", reason: "must not contain U+0000")) {
            try WireLocateRefusal.decode(Data(#"{"outcome":"refused","reason":"a\u0000b"}"#.utf8))
        }
    }
}
