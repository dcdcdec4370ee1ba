@testable import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// Issue 31, the server side of the wire's golden files (`Tests/BeekonWireTests/Golden/messages`
    /// in the root package): what the server writes is those bytes, and it reads them through its
    /// own routes. The SDK side reads and writes the same files (`WireGoldenSDKTests`).
    @Suite struct WireGoldenServer {
        static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/BeekonWireTests/Golden/messages").standardizedFileURL
        static let request1 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071")!
        static let request2 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6072")!
        static let install = UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff")!

        static func golden(_ m: WireMessage) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: dir.appendingPathComponent(m.goldenFileName)))
        }

        static func millis(_ text: String) -> Int64 { WireTimestamp(wire: text)!.millis }

        static let requests = [
            LocateRequest(
                id: request1, installId: install, requestedBy: "admin", createdAtMillis: millis("2026-06-15T12:34:50.000Z"),
                expiresAtMillis: millis("2026-06-15T12:35:50.000Z")),
            LocateRequest(
                id: request2, installId: install, requestedBy: "sh_x", createdAtMillis: millis("2026-06-15T12:34:55.123Z"),
                expiresAtMillis: millis("2026-06-15T12:35:55.123Z")),
        ]

        @Test("issue 31: every BeekonWire message has a golden file")
        func everyMessageHasAGoldenFile() throws {
            for m in WireMessage.allCases { #expect(try !Self.golden(m).isEmpty, "\(m)") }
        }

        @Test("issue 31, BY-2, XR-6: the server writes the golden command answer, ingest answer and APNs payload")
        func serverWritesTheGoldenBytes() throws {
            #expect(LocateController.commands([Self.requests[0]]) == (try Self.golden(.commands)))
            let result = IngestResult(duplicateBatch: false, locationsStored: 3, locationsDuplicate: 1, eventsStored: 1, eventsDuplicate: 0)
            let answer = [UInt8](result.answer(locateRequests: Self.requests.map(\.notice)).encoded())
            #expect(String(decoding: answer, as: UTF8.self) == String(decoding: try Self.golden(.ingestAnswer), as: UTF8.self))
            #expect(PushPayload.apns(requestId: Self.request1) == (try Self.golden(.locatePushAPNs)))
        }

        @Test("issue 31, XR-6: the server reads the golden push-token registrations")
        func serverReadsTheGoldenRegistrations() throws {
            let apns = try PushToken.parse(Self.golden(.pushTokenAPNs), installId: Self.install, nowMillis: 5).get()
            #expect(
                apns
                    == PushToken(
                        installId: Self.install, provider: .apns, token: "00ff10a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2",
                        environment: .sandbox, topic: "com.example.beekon", updatedAtMillis: 5))
            let fcm = try PushToken.parse(Self.golden(.pushTokenFCM), installId: Self.install, nowMillis: 5).get()
            #expect(fcm == PushToken(installId: Self.install, provider: .fcm, token: "fcm:APA91b-Example_token.1", updatedAtMillis: 5))
        }

        /// The golden envelope, uploaded as its own bytes; the golden refusal, posted to the answer route.
        @Test("issue 31, BY-2: the golden envelope and refusal through the server's routes", arguments: Backend.all)
        func goldenMessagesThroughTheRoutes(_ backend: Backend) async throws {
            try await withRouter(backend) { server, _ in
                let upload = try await Ingest.HTTPIngest.raw(server, Self.golden(.envelope))
                #expect(upload.status == 200, "\(upload.text)")
                let answer = try WireIngestAnswer.decode(Data(upload.body))
                #expect(answer.locationsStored == 2 && answer.eventsStored == 1 && answer.duplicateBatch == false)
                #expect(answer.locateRequests == [], "the server delivers locate requests; none is open")

                let device = "/v1/devices/\(Self.install.wireString)"
                let created = try await server.send("POST", device + "/locate")
                #expect(created.status == 202)
                let id = try #require(try created.json()["id"] as? String)
                let commands = try await server.send("GET", device + "/commands?wait=0")
                #expect(try WireCommands.decode(Data(commands.body)).locateRequests.map(\.id.wireString) == [id])
                let refused = try await server.send(
                    "POST", device + "/locate/\(id)/answer", body: Self.golden(.locateRefusal),
                    headers: ["Content-Type": "application/json"])
                #expect(refused.status == 200)
                #expect(try refused.json()["state"] as? String == "refused")
                #expect(try refused.json()["reason"] as? String == "sharing_off")
            }
        }

        /// Issue 31: one renderer — the read API and the live stream show a stored fix as the same
        /// object. The one member only the stream has is `locate_request_id`, which the fixes
        /// table does not keep.
        @Test("issue 31: the read API and the live stream render a fix alike", arguments: Backend.all)
        func readAndLiveRenderAlike(_ backend: Backend) async throws {
            try await withServer(backend) { server, _ in
                #expect(try await Ingest.HTTPIngest.raw(server, Self.golden(.envelope)).status == 200)
                let page = try await server.send("GET", "/v1/devices/\(Self.install.wireString)/fixes")
                #expect(
                    try (page.json()["fixes"] as? [[String: Any]])?.allSatisfy { $0["install_id"] as? String == Self.install.wireString }
                        == true)
                let live = try await Live.fixes(server.base + "/v1/live", after: "0", count: 2).filter { $0.event == "fix" }
                #expect(live.count == 2)
                // Each live payload, byte for byte, is an element of the read API's page.
                for m in live {
                    let fix = m.data.replacingOccurrences(of: #","locate_request_id":"\#(Self.request1.wireString)""#, with: "")
                    #expect(page.text.contains(fix), "live \(m.data) read \(page.text)")
                }
                #expect(live.last?.data.contains(#""locate_request_id":"\#(Self.request1.wireString)""#) == true)
            }
        }
    }
}

/// Issue 31: a coarsened share sees the one renderer's output for the typed, coarsened fix.
@Suite struct ViewerJSONTests {
    static let fix = StoredFix(
        location: {
            var l = WireLocation(
                id: UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22")!, timestamp: WireTimestamp(millis: 1_781_500_000_123),
                trigger: .manual, motion: .moving, isMock: true, latitude: 52.520_008_3, longitude: 13.404_954_1, accuracy: 4.5,
                speed: 1.25, bearing: 270.5, altitude: 38.7, activity: .cycling, quality: .implausibleSpeed, privacyZone: "home")
            l.locateRequestId = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071")!
            return l
        }(), sessionId: UUID(uuidString: "0190d4e0-1234-7000-8000-aabbccddeeff")!,
        installId: UUID(uuidString: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff")!,
        batchId: UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f")!, receivedAt: WireTimestamp(millis: 1_781_500_001_000))

    @Test("issue 31: a fix object is rendered in one fixed order and read back to the same typed value")
    func renderAndReadBack() throws {
        let json = ViewerJSON.fix(Self.fix)
        #expect(
            json
                == #"{"id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22","timestamp":"2026-06-15T05:06:40.123Z","trigger":"manual","motion":"moving","is_mock":true,"latitude":52.5200083,"longitude":13.4049541,"accuracy":4.5,"speed":1.25,"bearing":270.5,"altitude":38.7,"activity":"cycling","quality":"implausible_speed","locate_request_id":"0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071","privacy_zone":"home","install_id":"0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff","session_id":"0190d4e0-1234-7000-8000-aabbccddeeff","batch_id":"0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e1f","received_at":"2026-06-15T05:06:41.000Z"}"#
        )
        #expect(ViewerJSON.readFix(json) == Self.fix)
    }

    @Test("XR-4, issue 31: a stored payload is coarsened as its typed value, booleans and all")
    func coarsenedPayloadIsTheTypedCoarsening() throws {
        let c = Coarsening(meters: 500)
        let viewer = ViewerScope(devices: nil, rules: ShareScope(precisionMeters: 500))
        let coarse = viewer.fixPayload(ViewerJSON.fix(Self.fix))
        // The privacy zone's id is a name, withheld under any precision (issue 50).
        var expected = c.fix(Self.fix)
        expected.location.privacyZone = nil
        #expect(coarse == ViewerJSON.fix(expected))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(coarse.utf8)) as? [String: Any])
        #expect(object["speed"] == nil && object["bearing"] == nil && object["privacy_zone"] == nil)
        #expect(object["latitude"] as? Double == 52.52 && object["longitude"] as? Double == 13.4)
        #expect(object["accuracy"] as? Double == 500 && object["altitude"] as? Double == 0)
        #expect(coarse.contains(#""is_mock":true"#))
        // Full precision leaves the payload as stored; a payload that is not a fix never reaches a coarsened viewer.
        #expect(ViewerScope.everything.fixPayload("not json") == "not json")
        #expect(viewer.fixPayload(#"{"latitude":52.5200083,"longitude":13.4049541}"#) == "{}")
    }

    @Test("BY-7, XR-2: a share limited in time gets a fix's received_at as its own time and a nil batch_id, coarsened or not")
    func aShareLimitedInTimeDoesNotSeeTheReceipt() throws {
        for precision in [nil, 500.0] {
            let viewer = ViewerScope(devices: nil, rules: ShareScope(precisionMeters: precision, hours: "07:00-19:00", timeZone: "UTC"))
            let shown = try #require(ViewerJSON.readFix(viewer.fixPayload(ViewerJSON.fix(Self.fix))))
            #expect(shown.receivedAt == Self.fix.location.timestamp && shown.batchId == ViewerScope.withheldBatch)
            #expect(shown.sessionId == Self.fix.sessionId && shown.location.id == Self.fix.location.id)
            #expect(viewer.shown(Self.fix) == shown)
        }
        // Admin keys and a share not limited in time see the receipt as stored.
        #expect(ViewerScope.everything.fixPayload(ViewerJSON.fix(Self.fix)) == ViewerJSON.fix(Self.fix))
        #expect(ViewerScope(devices: nil, rules: ShareScope(live: true)).shown(Self.fix) == Self.fix)
    }
}

extension Ingest.WireGoldenServer {
    static func text(_ m: WireMessage) throws -> String { String(decoding: try golden(m), as: UTF8.self) }

    /// The golden envelope as the server received it at the live golden files' `received_at`.
    static func receivedBatch() throws -> IngestBatch {
        IngestBatch(
            envelope: try WireEnvelope.decode(Data(golden(.envelope))), receivedAt: WireTimestamp(wire: "2026-06-15T12:34:57.000Z")!)
    }

    @Test("issue 31, BY-1, BY-8: the server writes the live stream's golden events")
    func serverWritesTheLiveGoldenEvents() async throws {
        let batch = try Self.receivedBatch()
        let events = PendingEvent.of(batch, stored: { _ in true })
        let manual = UUID(uuidString: "0190d4e2-7b1a-7c3e-9f10-2a4b6c8d0e22")!
        #expect(events.first { $0.id == manual }?.payload == (try Self.text(.liveFix)))
        #expect(events.first { $0.kind == .geofenceEvent }?.payload == (try Self.text(.liveGeofenceEvent)))

        let (store, path) = try await Ingest.ClockSeams.scratchStore()
        defer { Ingest.ClockSeams.remove(path) }
        let monitor = DeviceStatusMonitor(
            store: store, defaultExpectedSeconds: 60, interval: .seconds(60), now: { Date(timeIntervalSince1970: 0) },
            logger: testLogger, onPublished: {})
        let times = DeviceTimes(
            installId: Self.install, lastFixMillis: Self.millis("2026-06-15T12:34:51.500Z"),
            lastContactMillis: Self.millis("2026-06-15T12:34:57.000Z"), expectedSeconds: 300)
        let at = Self.millis("2026-06-15T12:44:55.000Z")
        let status = monitor.status(of: times, nowMillis: at)
        #expect(status == .delayed, "the golden status is the one the rule gives")
        #expect(monitor.payload(times, status, at) == (try Self.text(.liveDevice)))

        var request = Self.requests[0]
        request.state = .answered
        request.deliveredAtMillis = Self.millis("2026-06-15T12:34:51.000Z")
        request.finishedAtMillis = Self.millis("2026-06-15T12:34:57.000Z")
        request.fixId = manual
        request.fixJSON = try Self.text(.liveFix)
        #expect(request.json(includeFix: false) == (try Self.text(.liveLocate)))
        // The API's object is the same one with the answering fix appended.
        #expect(request.json() == String(try Self.text(.liveLocate).dropLast()) + #","fix":"# + (try Self.text(.liveFix)) + "}")

        let start = LiveStart(
            scope: .everything, grant: ViewerGrant(scope: .everything), requested: 3, marks: EventLogMarks(head: 42, prunedThrough: 10),
            retryMillis: 1000)
        #expect(
            String(buffer: start.preamble).hasSuffix("id: 42\nevent: reset\ndata: " + (try Self.text(.liveReset)) + "\n\n"))
    }

    /// The SDK's `LiveViewer` reads every event of a real stream as its typed value.
    @Test("issue 31, BY-1: a LiveViewer reads the server's live events typed", arguments: Backend.all)
    func liveViewerReadsTypedEvents(_ backend: Backend) async throws {
        try await withServer(backend) { server, _ in
            #expect(try await Ingest.HTTPIngest.raw(server, Self.golden(.envelope)).status == 200)
            let got = try await Live.collect(server.base + "/v1/live", lastEventID: "0", kinds: ["fix", "geofence_event"]) { ms in
                ms.filter { $0.event == "fix" }.count == 2 && ms.contains { $0.event == "geofence_event" }
            }
            let typed = try got.map { m in try #require(try m.liveEvent(), "\(m.event) \(m.data)") }
            let fixes = typed.compactMap { e -> WireViewerFix? in if case .fix(let f) = e { return f } else { return nil } }
            let batch = try Self.receivedBatch()
            #expect(fixes.map(\.location) == batch.envelope.locations)
            #expect(fixes.allSatisfy { $0.installId == Self.install && $0.batchId == batch.envelope.batchId })
            let geofence = typed.compactMap { e -> WireViewerGeofenceEvent? in
                if case .geofenceEvent(let g) = e { return g } else { return nil }
            }
            #expect(geofence.map(\.event) == batch.envelope.geofenceEvents)
        }
    }
}

extension Ingest.WireGoldenServer {
    /// The member names of a JSON object, in the order written.
    static func keyOrder(_ json: String) -> [String] {
        json.split(separator: ",").compactMap { part in
            let member = part.drop { $0 == "{" }
            guard member.first == "\"", let end = member.dropFirst().firstIndex(of: "\"") else { return nil }
            return String(member[member.index(after: member.startIndex)..<end])
        }
    }

    @Test(
        "issue 31, AU-3, IN-5: the token endpoint reads the golden forms and answers a grant shaped as the golden one",
        arguments: Backend.all)
    func tokenExchangeGolden(_ backend: Backend) async throws {
        try await withRouter(backend, configure: Ingest.DeviceIdentity.required) { server, _ in
            let form = ["Content-Type": WireMessage.tokenRefresh.mediaType]
            // The golden refresh form is read as a refresh: its token is unknown here, so invalid_grant (not invalid_request).
            let refresh = try await server.send("POST", "/oauth/token", body: Self.golden(.tokenRefresh), headers: form)
            #expect(refresh.status == 400)
            #expect(try refresh.json()["error"] as? String == "invalid_grant", "\(refresh.text)")

            let code = try await Ingest.DeviceIdentity.newCode(server, #"{"uses":1,"ttl_seconds":3600}"#)
            let body = try Self.text(.tokenEnrollment).replacingOccurrences(of: "ben1.c2VjcmV0LWNvZGU", with: WireForm.escape(code))
            let enrolled = try await server.send("POST", "/oauth/token", body: Array(body.utf8), headers: form)
            #expect(enrolled.status == 200, "\(enrolled.text)")
            let grant = try WireTokenGrant.decode(Data(enrolled.body))
            #expect(grant.tokenType == "Bearer" && grant.expiresIn > 0)
            #expect(enrolled.body == [UInt8](grant.encoded()), "the server writes a grant with BeekonWire's writer")
            #expect(Self.keyOrder(enrolled.text) == Self.keyOrder(try Self.text(.tokenGrant)))
            #expect(enrolled.headers["cache-control"] == "no-store")

            // The refusals name the OAuth error of the field that broke the request.
            for (text, error) in [
                ("grant_type=password&username=a", "unsupported_grant_type"), ("grant_type=refresh_token", "invalid_request"),
                ("grant_type=enrollment_code&code=x&install_id=nope", "invalid_request"),
            ] {
                let r = try await server.send("POST", "/oauth/token", body: Array(text.utf8), headers: form)
                let code = try r.json()["error"] as? String
                #expect(r.status == 400 && code == error, "\(text) → \(r.text)")
            }
        }
    }
}
