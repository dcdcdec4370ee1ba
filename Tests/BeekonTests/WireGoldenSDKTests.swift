import BeekonTestSupport
import BeekonTesting
import BeekonWire
import Foundation
import Testing

@testable import Beekon

/// Issue 31, the SDK side of the wire's golden files (`Tests/BeekonWireTests/Golden/messages`):
/// the SDK reads the server's messages from those bytes, and what it sends is those bytes.
/// The server's side reads and writes the same files (`WireGoldenServerTests`).
@Suite("Golden messages, SDK side")
struct WireGoldenSDKTests {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../BeekonWireTests/Golden/messages").standardizedFileURL
    static let request1 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6071")!
    static let request2 = UUID(uuidString: "0192b3c4-d5e6-7f80-9a1b-2c3d4e5f6072")!

    static func golden(_ m: WireMessage) throws -> Data {
        try Data(contentsOf: dir.appendingPathComponent(m.goldenFileName))
    }

    @Test("BY-2: the command channel's golden answer lists its request")
    func commandsAnswer() throws {
        #expect(LocatePoll(status: 200, body: try Self.golden(.commands)) == .requests([Self.request1]))
    }

    @Test("BY-2: the golden ingest answer's requests are handled: the first answered with a fix, the second refused as too soon")
    func ingestAnswer() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, syncConfig())
        await h.provider.setOneShotFix(fix(5, north: 7))
        await transport.enqueue(.success(HTTPResponse(status: 200, body: try Self.golden(.ingestAnswer))))
        try await beekon.start()
        await h.provider.send(fix(1))
        try await beekon.stop()  // the upload whose answer is the golden file
        await transport.waitForRequests(3)
        let requests = await transport.requests
        let answers = requests.dropFirst().filter { $0.url.path == loopbackURL.path }.flatMap { $0.envelope.locations }
        #expect(answers.map(\.locateRequestId) == [Self.request1])
        let refusal = try #require(requests.first { $0.url.path.hasSuffix("/locate/\(Self.request2.wireString)/answer") })
        #expect(refusal.method == "POST")
        #expect(try WireLocateRefusal.decode(refusal.body) == WireLocateRefusal(reason: "too_soon"))
        #expect(refusal.body == WireLocateRefusal(reason: "too_soon").encoded())
        // The golden refusal is the same shape with another reason.
        #expect(try WireLocateRefusal.decode(Self.golden(.locateRefusal)) == WireLocateRefusal(reason: "sharing_off"))
    }

    @Test("XR-6: the push-token registrations the SDK sends are the golden bytes")
    func pushTokens() async throws {
        let h = Harness()
        let transport = ScriptedTransport(fallback: .success(HTTPResponse(status: 204)))
        let beekon = h.beekon(transport: transport)
        try await configureSync(beekon, BeekonConfig(sync: SyncConfig(url: loopbackURL)))
        let hex = "00ff10a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2"
        let token = Data(
            stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: i)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            })
        #expect(await beekon.setPushToken(token, environment: .sandbox, topic: "com.example.beekon"))
        #expect(await beekon.setFCMToken("fcm:APA91b-Example_token.1"))
        let puts = await transport.requests.filter { $0.method == "PUT" }.map(\.body)
        #expect(puts == [try Self.golden(.pushTokenAPNs), try Self.golden(.pushTokenFCM)])
    }

    static let goldenRefreshToken = "brt1.Zm9vYmFyYmF6LXJlZnJlc2g"

    @Test("AU-3, issue 31: the refresh request the SDK sends to a beekon-ingest token URL is the golden form")
    func refreshRequest() throws {
        let url = URL(string: "http://127.0.0.1:9/oauth/token")!
        let tokens = TokenSet(accessToken: "old", refreshToken: Self.goldenRefreshToken, expiresAt: nil)
        let request = RefreshExchange.request(url: url, config: AuthConfig.refreshing(at: url), tokens: tokens)
        #expect(request.body == (try Self.golden(.tokenRefresh)))
        #expect(request.headers["Content-Type"] == WireMessage.tokenRefresh.mediaType)
    }

    @Test("AU-4, issue 31: the golden grant is read as the server wrote it; expiry relative to now")
    func grantIsRead() throws {
        let now = Date(timeIntervalSince1970: 1_000)
        let current = TokenSet(accessToken: "old", refreshToken: "brt1.old", expiresAt: nil)
        let read = RefreshExchange.parse(try Self.golden(.tokenGrant), current: current, mapping: nil, now: now)
        let grant = try WireTokenGrant.decode(Self.golden(.tokenGrant))
        #expect(read == TokenSet(accessToken: grant.accessToken, refreshToken: grant.refreshToken, expiresAt: 1_900))
    }

    @Test("issue 31: enroll sends the golden enrollment form (with this install's id) and adopts the golden grant")
    func enrollment() async throws {
        let h = Harness()
        let transport = ScriptedTransport()
        let beekon = h.beekon(transport: transport)
        await transport.enqueue(.success(HTTPResponse(status: 200, body: try Self.golden(.tokenGrant))))
        let url = URL(string: "http://127.0.0.1:9/oauth/token")!
        let auth = try await beekon.enroll(code: "ben1.c2VjcmV0LWNvZGU", tokenURL: url)
        let install = try await beekon.installID()
        let sent = try #require(await transport.requests.first)
        let golden = String(decoding: try Self.golden(.tokenEnrollment), as: UTF8.self)
            .replacingOccurrences(of: "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff", with: install.wireString)
        #expect(String(decoding: sent.body, as: UTF8.self) == golden)
        #expect(try WireTokenRequest.decode(sent.body, contentType: nil) == .enrollment(code: "ben1.c2VjcmV0LWNvZGU", installId: install))
        let grant = try WireTokenGrant.decode(Self.golden(.tokenGrant))
        #expect(auth.accessToken == grant.accessToken && auth.refreshToken == grant.refreshToken)
        #expect(auth.refreshPayload == WireTokenRequest.refresh(refreshToken: "{refreshToken}").fields)
    }
}
