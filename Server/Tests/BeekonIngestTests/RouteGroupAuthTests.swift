@testable import BeekonIngest
import BeekonWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

extension Ingest {
    /// Issue 49: a route group's middleware checks the credential and puts it in the
    /// ``IngestRequestContext``; a handler reads it from there, and a path parameter that is
    /// not a UUID is a thrown ``APIError`` rendered as the server's envelope.
    @Suite struct RouteGroupAuth {
        static let badID = #"{"error":"invalid_request","message":"install_id must be a UUID"}"#

        /// The authenticator of a scratch store's token service (no key loaded: no access token verifies).
        static func withAuthenticator(required: Bool, _ body: (Authenticator) async throws -> Void) async throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-groups-\(UUID().uuidString).sqlite").path
            defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            let tokens = TokenService(store: store.tokens, accessTTLSeconds: 900, refreshTTLSeconds: 86_400)
            try await body(Authenticator(required: required, apiKeys: ["admin-k"], enrollerKeys: ["enroller-k"], tokens: tokens))
        }

        /// Auth required, with the admin key `admin-k`.
        static func adminKeyRequired(_ config: inout IngestConfiguration) {
            config.authMode = .required
            config.apiKeys = ["admin-k"]
        }

        @Test("a handler outside a checking group cannot read a credential: 500, not an answer without a check")
        func handlerWithoutItsMiddlewareFails() async throws {
            try await Self.withAuthenticator(required: false) { auth in
                let router = Router(context: IngestRequestContext.self)
                router.get("/unchecked/viewer") { _, context in
                    _ = try context.requireViewer()
                    return Response(status: .ok)
                }
                router.get("/unchecked/principal") { _, context in
                    _ = try context.requirePrincipal()
                    return Response(status: .ok)
                }
                router.group().add(middleware: ViewerMiddleware(access: ViewerAccess(auth: auth, shares: nil), what: "test"))
                    .get("/viewer") { _, context in
                        try context.requireViewer().scope == .everything ? Response(status: .ok) : Response(status: .forbidden)
                    }
                try await Application(router: router).test(.router) { client in
                    for path in ["/unchecked/viewer", "/unchecked/principal"] {
                        let r = try await client.execute(uri: path, method: .get)
                        #expect(r.status == .internalServerError, "\(path)")
                        let body = try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any]
                        #expect(body?["error"] as? String == "internal", "\(path): \(String(buffer: r.body))")
                    }
                    #expect(try await client.execute(uri: "/viewer", method: .get).status == .ok)
                }
            }
        }

        @Test("the admin group admits admin keys (and enroller keys where asked), 401 without a credential, 403 with another")
        func adminGroupSetsThePrincipal() async throws {
            try await Self.withAuthenticator(required: true) { auth in
                let router = Router(context: IngestRequestContext.self)
                for (path, enroller) in [("/admin", false), ("/enrol", true)] {
                    router.group().add(middleware: AdminMiddleware(auth: auth, enroller: enroller)).get(RouterPath(path)) { _, context in
                        let principal = try context.requirePrincipal()
                        return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "\(principal)")))
                    }
                }
                try await Application(router: router).test(.router) { client in
                    let admin: HTTPFields = [.authorization: "Bearer admin-k"]
                    let enroller: HTTPFields = [.authorization: "Bearer enroller-k"]
                    for path in ["/admin", "/enrol"] {
                        let ok = try await client.execute(uri: path, method: .get, headers: admin)
                        #expect(ok.status == .ok && String(buffer: ok.body) == "apiKey", "\(path)")
                        let none = try await client.execute(uri: path, method: .get)
                        #expect(none.status == .unauthorized && none.headers[.wwwAuthenticate] != nil, "\(path)")
                        let wrong = try await client.execute(uri: path, method: .get, headers: [.authorization: "Bearer nope"])
                        #expect(wrong.status == .unauthorized, "\(path)")
                    }
                    #expect(try await client.execute(uri: "/admin", method: .get, headers: enroller).status == .forbidden)
                    let enrolling = try await client.execute(uri: "/enrol", method: .get, headers: enroller)
                    #expect(enrolling.status == .ok && String(buffer: enrolling.body) == "enroller")
                }
            }
        }

        @Test("read, admin and circle routes check the credential before the path, and a bad id is today's 400 envelope")
        func credentialBeforePathAndTheBadIDEnvelope() async throws {
            try await withRouter(.sqlite, configure: Self.adminKeyRequired) { server, _ in
                let admin = ["Authorization": "Bearer admin-k"]
                let routes = [
                    ("GET", "/v1/devices/nope/sessions"), ("GET", "/v1/devices/nope/fixes"), ("GET", "/v1/devices/nope/proximity-events"),
                    ("POST", "/v1/devices/nope/revoke"),
                ]
                for (method, path) in routes {
                    let anonymous = try await server.send(method, path)
                    #expect(anonymous.status == 401, "\(method) \(path): \(anonymous.text)")
                    let bad = try await server.send(method, path, headers: admin)
                    #expect(bad.status == 400 && bad.text == Self.badID, "\(method) \(path): \(bad.status) \(bad.text)")
                }
                #expect(try await server.send("GET", "/v1/sessions/nope/track").status == 401)
                let track = try await server.send("GET", "/v1/sessions/nope/track", headers: admin)
                #expect(track.status == 400 && track.text == #"{"error":"invalid_request","message":"session_id must be a UUID"}"#)
                let locate = try await server.send(
                    "GET", "/v1/devices/\(Fixtures.ids.next().wireString)/locate/nope", headers: admin)
                #expect(locate.status == 400 && locate.text == #"{"error":"invalid_request","message":"request_id must be a UUID"}"#)
                // A circle's routes find the caller first, then read the circle's id.
                #expect(try await server.send("GET", "/v1/circles/nope").status == 401)
                #expect(try await server.send("GET", "/v1/circles/nope", headers: admin).status == 400)
                #expect(try await server.send("GET", "/v1/circles/cir_000000000000000000000000", headers: admin).status == 404)
            }
        }

        @Test("locate, history and device routes read the path's device before the credential, as before their middleware")
        func deviceBeforeCredentialOnDeviceRoutes() async throws {
            try await withRouter(.sqlite, configure: Self.adminKeyRequired) { server, _ in
                let install = Fixtures.ids.next().wireString
                let routes = [
                    ("POST", "/locate"), ("GET", "/locate/\(Fixtures.ids.next().wireString)"), ("GET", "/history"),
                    ("GET", "/commands?wait=0"), ("PUT", "/push-token"), ("DELETE", "/push-token"),
                    ("POST", "/locate/\(Fixtures.ids.next().wireString)/answer"),
                ]
                for (method, tail) in routes {
                    let bad = try await server.send(method, "/v1/devices/nope" + tail)
                    #expect(bad.status == 400 && bad.text == Self.badID, "\(method) \(tail): \(bad.status) \(bad.text)")
                    let anonymous = try await server.send(method, "/v1/devices/\(install)" + tail)
                    #expect(anonymous.status == 401, "\(method) \(tail): \(anonymous.status) \(anonymous.text)")
                    let wrong = try await server.send(
                        method, "/v1/devices/\(install)" + tail, headers: ["Authorization": "Bearer x"])
                    #expect(wrong.status == 401, "\(method) \(tail): \(wrong.status) \(wrong.text)")
                }
            }
        }
    }
}
