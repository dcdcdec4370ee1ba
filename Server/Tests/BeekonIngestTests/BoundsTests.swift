import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 28, finding 4: everything a client can make the server store or send is bounded.
    @Suite struct Bounds {
        /// One grapheme cluster of `bytes` bytes: an "a" and combining acute accents (2 bytes each).
        static func combining(bytes: Int) -> String {
            "a" + String(repeating: "\u{0301}", count: (bytes - 1) / 2)
        }

        /// IN-2 (schema v1 limits), issue 28: device strings are bounded in bytes of UTF-8, not
        /// in characters. The attack: 400 KB of combining marks is one character, so a character
        /// limit let it through into the store and into every `/v1/devices` answer. Each field
        /// over its byte limit is refused with 422 naming the field and the limit, nothing is
        /// stored, and a value at the limit is accepted.
        @Test(arguments: Backend.all)
        func deviceStringsAreBoundedInBytes(_ backend: Backend) async throws {
            try await withServer(backend) { server, _ in
                let huge = Self.combining(bytes: 400_000)
                #expect(huge.count == 1, "one character of \(huge.utf8.count) bytes")
                var attacks: [(field: String, limit: Int, envelope: WireEnvelope)] = []
                func add(_ field: String, _ limit: Int, _ change: (inout WireEnvelope) -> Void) {
                    var e = Fixtures.envelope(Fixtures.locations(2))
                    change(&e)
                    attacks.append((field, limit, e))
                }
                add("device.model", 128) { $0.device.model = huge }
                add("device.model", 128) { $0.device.model = Self.combining(bytes: 129) }
                add("device.platform", 64) { $0.device.platform = Self.combining(bytes: 65) }
                add("device.sdk_version", 64) { $0.device.sdkVersion = huge }
                add("locations[1].privacy_zone", 100) { $0.locations[1].privacyZone = huge }
                add("extras.note", 512) { $0.extras = ["note": huge] }
                add("extras", 64) { $0.extras = [huge: "v"] }
                add("extras", 4_096) { e in
                    for i in 0..<10 { e.extras["k\(i)"] = String(repeating: "x", count: 500) }
                }
                add("extras", 32) { e in
                    for i in 0..<33 { e.extras["k\(i)"] = "" }
                }
                add("geofence_events[0].geofence_id", 100) { e in
                    e.geofenceEvents = [
                        WireGeofenceEvent(id: Fixtures.ids.next(), geofenceId: huge, type: .enter, timestamp: e.locations[0].timestamp)
                    ]
                }
                for attack in attacks {
                    let r = try await HTTP.upload(server, attack.envelope)
                    #expect(r.status == 422, "\(attack.field): \(r.status) \(r.text.prefix(300))")
                    #expect(r.text.contains(attack.field) && r.text.contains("\(attack.limit)"), "\(attack.field): \(r.text.prefix(300))")
                    #expect(r.body.count < 2_000, "the answer does not echo the value: \(r.body.count) bytes")
                }
                let devices = try await HTTP.send("GET", server.base + "/v1/devices")
                #expect((try devices.json()["devices"] as? [Any])?.isEmpty == true, "nothing stored: \(devices.text.prefix(300))")

                // At the limits: accepted and stored whole.
                var full = Fixtures.envelope(Fixtures.locations(1))
                full.device.model = Self.combining(bytes: 127)
                full.locations[0].privacyZone = String(repeating: "é", count: 50)
                for i in 0..<8 { full.extras["key\(i)"] = String(repeating: "ü", count: 254) }
                #expect(full.extras.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } <= 4_096)
                let ok = try await HTTP.upload(server, full)
                #expect(ok.status == 200, "\(ok.text.prefix(300))")
                let listed = try #require(try await HTTP.send("GET", server.base + "/v1/devices").json()["devices"] as? [[String: Any]])
                #expect(listed.count == 1 && listed.first?["model"] as? String == full.device.model)
            }
        }

        /// Issue 28: a share label is bounded in bytes too (200), not in characters.
        @Test func shareLabelIsBoundedInBytes() async throws {
            try await withServer(.sqlite) { server, _ in
                for (label, status) in [(Self.combining(bytes: 60_001), 400), (Self.combining(bytes: 201), 400), (String(repeating: "é", count: 100), 201)] {
                    let body = try JSONSerialization.data(withJSONObject: ["all": true, "label": label])
                    let r = try await HTTP.send("POST", server.base + "/v1/shares", body: [UInt8](body), headers: ["Content-Type": "application/json"])
                    #expect(r.status == status, "\(label.utf8.count) bytes: \(r.status) \(r.text.prefix(200))")
                    if status == 400 { #expect(r.text.contains("200 bytes")) }
                }
            }
        }
    }
}
