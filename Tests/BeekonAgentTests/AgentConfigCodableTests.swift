import Beekon
import Foundation
import Testing
@testable import BeekonAgent

/// The agent's `--config` is decoded by `BeekonConfig`'s own `Codable` (strict:
/// `ConfigDecoding`), not by a hand-written mirror of it, so one contract serves both. The keys
/// are listed in the DocC article `Configuration.md`.
@Suite("Agent config decoded by BeekonConfig's Codable")
struct AgentConfigCodableTests {
    /// Every field set away from its default: what the SDK encodes, the agent decodes to
    /// the same value (the seed tokens are never encoded, so the recipe carries none).
    static let everyField = BeekonConfig(
        preset: .precision, minTimeBetweenLocationsSeconds: 7, minDistanceBetweenLocationsMeters: 12,
        sync: SyncConfig(
            url: URL(string: "https://ingest.example.org/v1/locations")!, headers: ["X-Api-Key": "k"], intervalSeconds: 120,
            batchSize: 250, syncThreshold: 20, keepUploadedLocations: false,
            auth: AuthConfig(
                strategy: .raw, refreshUrl: URL(string: "https://auth.example.org/token"), refreshPayload: ["grant_type": "refresh_token"],
                refreshHeaders: ["X-Refresh": "{refreshToken}"], refreshBodyFormat: .json,
                responseMapping: .init(accessToken: "data.at", refreshToken: "data.rt", expiresIn: "data.ttl"), skewMarginSeconds: 30),
            requestTimeoutSeconds: 12, trustedCertificates: ["/etc/beekon/ca.pem"],
            privacy: PrivacyConfig(
                blurRadiusMeters: 200,
                zones: [PrivacyZone(id: "home", latitude: 52.5, longitude: 13.4, radiusMeters: 150, action: .withhold)])),
        whenStationary: .pauseWithCheckIns, stationaryRadiusMeters: 25, checkInIntervalSeconds: 300, turnThresholdDegrees: 30,
        turnMinTimeSeconds: 3, maxDeviationMeters: 20, maxIntervalBetweenLocationsSeconds: 120, classifyActivity: true,
        heartbeatSeconds: 45, foregroundProfile: .foreground, backgroundProfile: .background, diagnosticLogLevel: .debug,
        diagnosticLogCapacity: 2000, followsAppLifecycle: false)

    @Test("the SDK's encoding of every field decodes back to the same configuration")
    func roundTrip() throws {
        let data = try JSONEncoder().encode(Self.everyField)
        let config = try AgentConfig.parse(data)
        #expect(config.sdk == Self.everyField)
        // And the lenient (persisted) path agrees.
        #expect(try JSONDecoder().decode(BeekonConfig.self, from: data) == Self.everyField)
    }

    @Test("the agent's own keys round-trip next to the SDK's")
    func agentKeys() throws {
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(Self.everyField)) as? [String: Any])
        let policy = LocatePolicy(sharingEnabled: false, minIntervalSeconds: 5, timeoutSeconds: 40)
        object["locate"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(policy))
        object["geofences"] = try JSONSerialization.jsonObject(
            with: JSONEncoder().encode([Geofence(id: "depot", latitude: 1, longitude: 2, radiusMeters: 30, notifyOnEntry: false)]))
        object["extras"] = ["vehicle": "van-7"]
        object["appState"] = "background"
        let config = try AgentConfig.parse(JSONSerialization.data(withJSONObject: object))
        #expect(config.sdk == Self.everyField)
        #expect(config.locate == policy)
        #expect(config.geofences == [Geofence(id: "depot", latitude: 1, longitude: 2, radiusMeters: 30, notifyOnEntry: false)])
        #expect(config.extras == ["vehicle": "van-7"] && config.appState == .background)
    }

    @Test("defaults: an empty object is BeekonConfig() and no agent keys")
    func emptyIsDefault() throws {
        #expect(try AgentConfig.parse(Data("{}".utf8)) == AgentConfig())
        let sync = try AgentConfig.parse(Data(#"{"sync":{"url":"https://h.example/x"}}"#.utf8)).sdk.sync
        #expect(sync == SyncConfig(url: URL(string: "https://h.example/x")!))
    }

    /// The exact one-line errors: the key's full path, and what is wrong with it.
    @Test(
        "a bad key or value is one line naming the key's path",
        arguments: [
            (#"{"sync":{"url":"https://x.org","auth":{"strategi":"raw"}}}"#, "key 'sync.auth.strategi' is unknown (known: accessToken,"),
            (#"{"sync":{"url":"https://x.org","auth":{"strategy":"basic"}}}"#, "key 'sync.auth.strategy' must be one of bearer, raw"),
            (#"{"preset":"turbo"}"#, "key 'preset' must be one of saver, balanced, precision"),
            (#"{"preset":2}"#, "key 'preset' must be one of saver, balanced, precision"),
            (#"{"minTimeBetweenLocationsSeconds":null}"#, "key 'minTimeBetweenLocationsSeconds' must not be null"),
            (#"{"minTimeBetweenLocationsSeconds":"30"}"#, "key 'minTimeBetweenLocationsSeconds' must be a number"),
            (#"{"classifyActivity":1}"#, "key 'classifyActivity' must be a boolean"),
            (#"{"sync":{"url":"https://x.org","batchSize":"5"}}"#, "key 'sync.batchSize' must be a whole number"),
            (#"{"sync":{"headers":{}}}"#, "key 'sync.url' is required"),
            (
                #"{"geofences":[{"id":"a","latitude":1,"longitude":2,"radiusMeters":3},{"id":"b","latitude":1,"radiusMeters":3}]}"#,
                "key 'geofences[1].longitude' is required"
            ),
            (#"{"foregroundProfile":{"gate":1}}"#, "key 'foregroundProfile.gate' is unknown (known: preset,"),
            (#"{"locate":{"timeoutSeconds":601}}"#, "key 'locate.timeoutSeconds' must be in (0, 600]"),
            (#"{"locate":{"sharingEnabled":false}}"#, "key 'locate.sharingEnabled' is unknown (known: sharing, minIntervalSeconds"),
            (#"{"extras":{"a":1}}"#, "key 'extras.a' must be a string"),
            (#"{"frobnicate":true}"#, "key 'frobnicate' is unknown (known: preset,"),
            (#"{"sync":{"url":"https://x.org","trustedCertificates":[]}}"#, "key 'sync.trustedCertificates' must list at least one"),
            ("[1]", "the top level must be an object"),
            (#"{"preset": "saver""#, "not valid JSON"),
        ])
    func badKeyErrors(text: String, expected: String) {
        do {
            let config = try AgentConfig.parse(Data(text.utf8))
            Issue.record("accepted \(text): \(config)")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("an unknown key at the top level lists the SDK's keys and the agent's")
    func unknownKeyListsEveryKnownKey() {
        #expect(throws: AgentConfig.Problem.self) { try AgentConfig.parse(Data(#"{"minTimeBetweenLocationSeconds":10}"#.utf8)) }
        do { _ = try AgentConfig.parse(Data(#"{"minTimeBetweenLocationSeconds":10}"#.utf8)) } catch {
            for key in BeekonConfig.keyNames + ["extras", "geofences", "appState", "locate"] {
                #expect(error.description.contains(key), "\(key) missing from \(error.description)")
            }
        }
    }

    @Test("a token value is never echoed in an error")
    func tokensAreNotEchoed() {
        for text in [
            #"{"sync":{"url":"https://x.org","auth":{"accessToken":"SECRET-AT","strategy":"SECRET-AT"}}}"#,
            #"{"sync":{"url":"https://x.org","auth":{"accessToken":"SECRET-AT","expiresAt":"SECRET-AT"}}}"#,
        ] {
            do { _ = try AgentConfig.parse(Data(text.utf8)) } catch {
                #expect(!error.description.contains("SECRET"), "\(error.description)")
            }
        }
    }

    /// The configuration article's example `agent.json` decodes, and every key of its table is a
    /// key the decoder knows, and the other way round (the documentation and `Codable` are one contract).
    @Test("Configuration article: the example agent.json decodes and the key table matches the decoder")
    func documentedExampleAndTable() throws {
        let article = try String(contentsOf: Fixtures.configurationArticle, encoding: .utf8)
        let example = try #require(article.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let config = try AgentConfig.parse(Data(example.utf8))
        #expect(config.sdk.whenStationary == .pauseWithCheckIns && config.sdk.sync?.batchSize == 200)
        #expect(config.geofences?.first?.notifyOnExit == false && config.locate?.timeoutSeconds == 20)
        #expect(config.extras == ["vehicle": "van-7"])

        let section = try #require(
            article.components(separatedBy: "## Keys\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        var tableKeys = Set<String>()
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.split(separator: "|").first ?? ""
            for part in cell.split(separator: "`")
            where !part.trimmingCharacters(in: .whitespaces).isEmpty && part.trimmingCharacters(in: .whitespaces) != "/" {
                tableKeys.insert(String(part))
            }
        }
        let decoderKeys = Set(
            BeekonConfig.keyNames.filter { $0 != "sync" } + ["extras", "geofences", "appState"]
                + SyncConfig.keyNames.map { "sync.\($0)" } + LocatePolicy.keyNames.map { "locate.\($0)" })
        #expect(
            tableKeys == decoderKeys,
            "article only: \(tableKeys.subtracting(decoderKeys)); decoder only: \(decoderKeys.subtracting(tableKeys))")
        // The one-key example of the gate article's error-bounded admission decodes too.
        #expect(try AgentConfig.parse(Data(#"{"preset": "precision", "maxDeviationMeters": 25}"#.utf8)).sdk.maxDeviationMeters == 25)
    }
}
