@testable import BeekonIngest
import BeekonTesting
import BeekonWire
import Foundation
import ProcessSpawn
import Hummingbird
import Testing

extension Ingest {
    /// The published contract (`Sources/BeekonIngest/Contract`) against the server itself:
    /// the routes it registers, the documents it serves, and what its decoder accepts.
    @Suite struct Contract {
        static let contractDir = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().appendingPathComponent("../../Sources/BeekonIngest/Contract").standardizedFileURL
        static let goldenDir = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().appendingPathComponent("../../../Tests/BeekonWireTests/Golden").standardizedFileURL

        static func document() throws -> [String: Any] {
            let data = try Data(contentsOf: contractDir.appendingPathComponent("openapi.json"))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }

        /// `METHOD /path/{}` for every documented operation.
        static func documentedRoutes() throws -> Set<String> {
            let paths = try #require(try document()["paths"] as? [String: [String: Any]])
            var out = Set<String>()
            for (path, item) in paths {
                for method in item.keys where ["get", "post", "put", "patch", "delete", "head"].contains(method) {
                    out.insert("\(method.uppercased()) \(normalised(path))")
                }
            }
            return out
        }

        /// Path parameters spelled `{name}` (OpenAPI) or `:name` (Hummingbird) become `{}`.
        static func normalised(_ path: String) -> String {
            path.split(separator: "/", omittingEmptySubsequences: false).map { part in
                part.hasPrefix(":") || (part.hasPrefix("{") && part.hasSuffix("}")) ? "{}" : String(part)
            }.joined(separator: "/")
        }

        @Test("every route the server registers is documented in openapi.json, and every documented route exists")
        func routesAndDocumentAgree() throws {
            let clock = TestClock()
            let router = try withScratchStore { config, store, tokens in
                IngestServer.makeRouter(config, store: store, tokens: tokens, now: { clock.now() }, logger: testLogger).router
            }
            let registered = Set(router.routes.map { "\($0.method.rawValue) \(Self.normalised($0.path.description))" })
            let documented = try Self.documentedRoutes()
            #expect(registered.count >= 9)
            #expect(
                registered.subtracting(documented).isEmpty, "routes without documentation: \(registered.subtracting(documented).sorted())")
            #expect(
                documented.subtracting(registered).isEmpty,
                "documented routes the server lacks: \(documented.subtracting(registered).sorted())")
        }

        @Test("the server serves the repository's openapi.json and envelope schema byte for byte")
        func servedDocumentsAreTheFiles() async throws {
            try await withRouter(.sqlite) { server, _ in
                let doc = try await server.send("GET", "/openapi.json")
                #expect(doc.status == 200)
                #expect(doc.headers["content-type"] == "application/json")
                #expect(doc.body == [UInt8](try Data(contentsOf: Self.contractDir.appendingPathComponent("openapi.json"))))
                let schema = try await server.send("GET", "/schemas/envelope-v1.json")
                #expect(schema.status == 200)
                #expect(schema.headers["content-type"] == "application/schema+json")
                #expect(schema.body == [UInt8](try Data(contentsOf: Self.contractDir.appendingPathComponent("envelope-v1.schema.json"))))
                let version = try #require(try Self.document()["info"] as? [String: Any])["version"] as? String
                #expect(version == BeekonVersion.current, "openapi.json info.version must follow BeekonVersion.current")
            }
        }

        @Test("the OpenAPI document's Envelope is the published JSON Schema, with its $defs as components")
        func envelopeComponentIsTheSchema() throws {
            let schemaData = try Data(contentsOf: Self.contractDir.appendingPathComponent("envelope-v1.schema.json"))
            var schema = try #require(try JSONSerialization.jsonObject(with: schemaData) as? [String: Any])
            let defs = try #require(schema.removeValue(forKey: "$defs") as? [String: Any])
            schema["$schema"] = nil
            schema["$id"] = nil
            let components = try #require((try Self.document()["components"] as? [String: Any])?["schemas"] as? [String: Any])
            let names = [
                "uuid": "UUID", "timestamp": "Timestamp", "device": "Device", "location": "Location", "geofenceEvent": "GeofenceEvent",
                "proximityEvent": "ProximityEvent",
            ]
            func rewrite(_ value: Any) -> Any {
                if let object = value as? [String: Any] {
                    var out: [String: Any] = [:]
                    for (key, v) in object {
                        if key == "$ref", let ref = v as? String, ref.hasPrefix("#/$defs/"), let name = names[String(ref.dropFirst(8))] {
                            out[key] = "#/components/schemas/\(name)"
                        } else {
                            out[key] = rewrite(v)
                        }
                    }
                    return out
                }
                if let array = value as? [Any] { return array.map(rewrite) }
                return value
            }
            func canonical(_ value: Any?) throws -> String {
                let object = try #require(value)
                return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
            #expect(try canonical(rewrite(schema)) == canonical(components["Envelope"]))
            for (def, name) in names {
                #expect(
                    try canonical(rewrite(try #require(defs[def]))) == canonical(components[name]),
                    "components.schemas.\(name) differs from $defs.\(def)")
            }
        }

        /// Envelopes the schema and the server's decoder must judge alike: the golden files
        /// (valid) and hand-made breaks of them (invalid).
        static func judgedEnvelopes() throws -> [(name: String, json: String, valid: Bool)] {
            var out: [(String, String, Bool)] = []
            let files = try FileManager.default.contentsOfDirectory(atPath: goldenDir.path).filter { $0.hasSuffix(".json") }.sorted()
            for file in files {
                out.append((file, try String(contentsOf: goldenDir.appendingPathComponent(file), encoding: .utf8), true))
            }
            let full = try String(contentsOf: goldenDir.appendingPathComponent("full.json"), encoding: .utf8)
            let breaks: [(String, String, String)] = [
                ("bearing 360", #""bearing":"#, #""bearing":360,"ignored":"#),
                ("unknown trigger", #""trigger":""#, #""trigger":"teleport","was":""#),
                ("schema_version 2", #""schema_version":1"#, #""schema_version":2"#),
                ("timestamp without millis", #""sent_at":""#, #""sent_at":"2026-06-15T12:34:56Z","old_sent_at":""#),
                ("latitude 91", #""latitude":"#, #""latitude":91,"lat0":"#),
            ]
            for (name, find, replacement) in breaks {
                let range = try #require(full.range(of: find), "full.json has no \(find)")
                out.append((name, full.replacingCharacters(in: range, with: replacement), false))
            }
            out.append(
                (
                    "an unknown field (must-ignore)", String(full.dropLast(full.hasSuffix("}\n") ? 2 : 1)) + #","future_field":{"x":1}}"#,
                    true
                ))
            return out
        }

        @Test("golden envelopes validate against the JSON Schema, and the schema and the server's decoder agree on breaks")
        func schemaAndDecoderAgree() async throws {
            let cases = try Self.judgedEnvelopes()
            for c in cases {
                let decoded = (try? WireEnvelope.decode(Data(c.json.utf8))) != nil
                #expect(decoded == c.valid, "the decoder judged '\(c.name)' \(decoded ? "valid" : "invalid")")
            }
            let verdicts = try await PythonCheck.run(
                """
                import json, sys, jsonschema
                schema = json.load(open(sys.argv[1]))
                jsonschema.Draft202012Validator.check_schema(schema)
                v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
                for doc in json.load(sys.stdin):
                    print("valid" if v.is_valid(json.loads(doc)) else "invalid")
                """, arguments: [Self.contractDir.appendingPathComponent("envelope-v1.schema.json").path],
                input: try JSONSerialization.data(withJSONObject: cases.map(\.json)))
            let lines = verdicts.split(separator: "\n").map(String.init)
            try #require(lines.count == cases.count, "python printed: \(verdicts)")
            for (c, verdict) in zip(cases, lines) {
                #expect(verdict == (c.valid ? "valid" : "invalid"), "the JSON Schema judged '\(c.name)' \(verdict)")
            }
        }

        /// Token requests the contract's `/oauth/token` schemas and the server's decoder must
        /// judge alike: `(name, media type, body, valid)`. A form is checked against the form
        /// schema as the object of its fields, JSON against the JSON schema.
        static let judgedTokenRequests: [(name: String, mediaType: String, body: String, valid: Bool)] = {
            let form = "application/x-www-form-urlencoded"
            let json = "application/json"
            let install = "0190c1a4-aaaa-7bbb-8ccc-ddddeeeeffff"
            return [
                ("form refresh", form, "grant_type=refresh_token&refresh_token=r1", true),
                ("form refresh, escaped token, an unknown field", form, "grant_type=refresh_token&refresh_token=a+b%2Fc%3D&scope=x", true),
                ("form refresh, empty token", form, "grant_type=refresh_token&refresh_token=", false),
                ("form refresh without a token", form, "grant_type=refresh_token", false),
                ("form refresh with an enrollment's fields", form, "grant_type=refresh_token&code=c&install_id=\(install)", false),
                ("form enrollment", form, "code=c1&grant_type=enrollment_code&install_id=\(install)", true),
                (
                    "form enrollment, upper-case install id", form, "code=c1&grant_type=enrollment_code&install_id=\(install.uppercased())",
                    true
                ),
                (
                    "form enrollment, install id without hyphens", form,
                    "code=c1&grant_type=enrollment_code&install_id=\(install.replacingOccurrences(of: "-", with: ""))", false
                ),
                ("form enrollment, install id in braces", form, "code=c1&grant_type=enrollment_code&install_id=%7B\(install)%7D", false),
                ("form enrollment, empty code", form, "code=&grant_type=enrollment_code&install_id=\(install)", false),
                ("form enrollment without a code", form, "grant_type=enrollment_code&install_id=\(install)", false),
                ("form enrollment without an install id", form, "code=c1&grant_type=enrollment_code", false),
                ("form client_credentials", form, "grant_type=client_credentials&refresh_token=r1", false),
                ("form without a grant type", form, "refresh_token=r1", false),
                ("empty form", form, "", false),
                ("JSON refresh", json, #"{"grant_type":"refresh_token","refresh_token":"r1"}"#, true),
                ("JSON refresh, a number as the token", json, #"{"grant_type":"refresh_token","refresh_token":1234}"#, true),
                ("JSON refresh, a fraction as the token", json, #"{"grant_type":"refresh_token","refresh_token":-1.5}"#, true),
                (
                    "JSON refresh, other members of any type", json,
                    #"{"grant_type":"refresh_token","refresh_token":"r1","n":3,"o":{"x":[1]},"b":true,"z":null}"#, true
                ),
                ("JSON refresh, empty token", json, #"{"grant_type":"refresh_token","refresh_token":""}"#, false),
                ("JSON refresh, a Boolean as the token", json, #"{"grant_type":"refresh_token","refresh_token":true}"#, false),
                ("JSON refresh, null as the token", json, #"{"grant_type":"refresh_token","refresh_token":null}"#, false),
                ("JSON refresh, an object as the token", json, #"{"grant_type":"refresh_token","refresh_token":{"t":"r1"}}"#, false),
                ("JSON refresh, an array as the token", json, #"{"grant_type":"refresh_token","refresh_token":["r1"]}"#, false),
                ("JSON enrollment", json, #"{"code":"c1","grant_type":"enrollment_code","install_id":"\#(install)"}"#, true),
                (
                    "JSON enrollment, a number as the code", json, #"{"code":7,"grant_type":"enrollment_code","install_id":"\#(install)"}"#,
                    true
                ),
                (
                    "JSON enrollment, a number as the install id", json, #"{"code":"c1","grant_type":"enrollment_code","install_id":7}"#,
                    false
                ),
                (
                    "JSON enrollment, a short install id", json, #"{"code":"c1","grant_type":"enrollment_code","install_id":"0190c1a4"}"#,
                    false
                ),
                ("JSON enrollment without a code", json, #"{"grant_type":"enrollment_code","install_id":"\#(install)"}"#, false),
                ("JSON, a number as the grant type", json, #"{"grant_type":1,"refresh_token":"r1"}"#, false),
                ("JSON password grant", json, #"{"grant_type":"password","refresh_token":"r1"}"#, false),
                ("JSON, an empty object", json, "{}", false),
                ("JSON, an array", json, #"[{"grant_type":"refresh_token","refresh_token":"r1"}]"#, false),
            ]
        }()

        /// schemathesis warned that `/oauth/token`'s schema was looser than the server's decoder;
        /// the contract now says what `WireTokenRequest` accepts, form and JSON.
        @Test("the token request schemas and WireTokenRequest agree on valid and invalid requests, form and JSON")
        func tokenRequestSchemaAndDecoderAgree() async throws {
            let cases = Self.judgedTokenRequests
            for c in cases {
                let decoded = (try? WireTokenRequest.decode(Data(c.body.utf8), contentType: c.mediaType)) != nil
                #expect(decoded == c.valid, "WireTokenRequest judged '\(c.name)' \(decoded ? "valid" : "invalid")")
            }
            let verdicts = try await PythonCheck.run(
                """
                import json, sys, urllib.parse, jsonschema
                doc = json.load(open(sys.argv[1]))
                content = doc["paths"]["/oauth/token"]["post"]["requestBody"]["content"]
                assert sorted(content) == ["application/json", "application/x-www-form-urlencoded"], sorted(content)
                def validator(media):
                    schema = dict(content[media]["schema"], components=doc["components"])
                    jsonschema.Draft202012Validator.check_schema(schema)
                    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
                validators = {media: validator(media) for media in content}
                for media, body in json.load(sys.stdin):
                    if media == "application/json":
                        instance = json.loads(body)
                    else:
                        instance = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
                    print("valid" if validators[media].is_valid(instance) else "invalid")
                """, arguments: [Self.contractDir.appendingPathComponent("openapi.json").path],
                input: try JSONSerialization.data(withJSONObject: cases.map { [$0.mediaType, $0.body] }))
            let lines = verdicts.split(separator: "\n").map(String.init)
            try #require(lines.count == cases.count, "python printed: \(verdicts)")
            for (c, verdict) in zip(cases, lines) {
                #expect(verdict == (c.valid ? "valid" : "invalid"), "the contract judged '\(c.name)' \(verdict)")
            }
        }

        /// Found by schemathesis (scripts/contract.sh): an undeclared method on a known path
        /// answered 404; RFC 9110 wants 405 with `Allow`.
        @Test("a known path with an undeclared method answers 405 with Allow; an unknown path 404")
        func undeclaredMethodsAnswer405() async throws {
            try await withRouter(.sqlite) { server, _ in
                let trace = try await server.send("TRACE", "/v1/devices")
                #expect(trace.status == 405)
                #expect(trace.headers["allow"] == "GET")
                #expect(try trace.json()["error"] as? String == "method_not_allowed")
                let delete = try await server.send("DELETE", "/v1/devices/\(Fixtures.ids.next().wireString)/sessions")
                #expect(delete.status == 405)
                #expect(delete.headers["allow"] == "GET")
                #expect(try await server.send("GET", "/v1/locations").headers["allow"] == "POST")
                #expect(try await server.send("GET", "/v1/nothing-here").status == 404)
                #expect(try await server.send("GET", "/v1/devices/x/sessions/extra").status == 404)
                #expect(try await server.send("GET", "/v1/devices").status == 200)
                // A literal route wins over a parameter one, as in the router (found by schemathesis).
                let options = try await server.send("OPTIONS", "/v1/shares/access")
                #expect(options.status == 405)
                #expect(options.headers["allow"] == "GET")
                #expect(try await server.send("PUT", "/v1/shares/sh_x").headers["allow"] == "DELETE")
            }
        }

        /// Found by schemathesis: a share's durations were unbounded, and the server adds them
        /// to millisecond times (an Int64 overflow traps the process).
        @Test("share durations beyond Int32 seconds are refused with 400, and the server stays up")
        func hugeShareDurationsAreRefused() async throws {
            try await withRouter(.sqlite) { server, _ in
                for field in ["expires_in_seconds", "history_seconds"] {
                    for value in ["9223372036854775807", "2147483648"] {
                        let body = #"{"all":true,""# + field + #"":"# + value + "}"
                        let answer = try await server.send(
                            "POST", "/v1/shares", body: Array(body.utf8),
                            headers: ["Content-Type": "application/json"])
                        #expect(answer.status == 400, "\(field)=\(value): \(answer.text)")
                    }
                }
                let ok = try await server.send(
                    "POST", "/v1/shares", body: Array(#"{"all":true,"expires_in_seconds":2147483647}"#.utf8),
                    headers: ["Content-Type": "application/json"])
                #expect(ok.status == 201)
                #expect(try await server.send("GET", "/healthz").status == 200)
            }
        }

        @Test("openapi.json validates as OpenAPI 3.1 (openapi-spec-validator)")
        func documentIsValidOpenAPI() async throws {
            let out = try await PythonCheck.run(
                """
                import json, sys
                from openapi_spec_validator import validate
                from openapi_spec_validator.validation import OpenAPIV31SpecValidator
                validate(json.load(open(sys.argv[1])), cls=OpenAPIV31SpecValidator)
                print("ok")
                """, arguments: [Self.contractDir.appendingPathComponent("openapi.json").path])
            #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        }
    }
}

/// Runs a short Python program (jsonschema and openapi-spec-validator from PyPI; `.ci/run`
/// installs them) and returns its standard output; a non-zero exit is a test failure.
enum PythonCheck {
    static func run(_ program: String, arguments: [String] = [], input: Data = Data()) async throws -> String {
        try await blocking { try runNow(program, arguments: arguments, input: input) }
    }

    private static func runNow(_ program: String, arguments: [String], input: Data) throws -> String {
        let run = try SpawnedProcess.run("/usr/bin/env", ["python3", "-c", program] + arguments, input: [UInt8](input))
        guard run.exit == SpawnedProcess.Exit(status: 0, signalled: false) else {
            throw TestFailure(
                "python3 exited \(run.exit.status) (pip install jsonschema openapi-spec-validator): "
                    + run.stderr.split(separator: "\n").suffix(3).joined(separator: " | "))
        }
        return run.stdout
    }
}
