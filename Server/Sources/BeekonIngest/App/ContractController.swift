import Hummingbird

/// `GET /openapi.json` (the OpenAPI 3.1 document of every route) and
/// `GET /schemas/envelope-v1.json` (the JSON Schema of the upload envelope). Both are
/// the files in `Sources/BeekonIngest/Contract`, compiled into the binary; they need no
/// credential, like any published API contract.
struct ContractController: Sendable {
    /// The OpenAPI document's bytes, exactly as kept in the repository.
    static var openAPIDocument: [UInt8] { PackageResources.openapi_json }
    /// The envelope schema's bytes, exactly as kept in the repository.
    static var envelopeSchema: [UInt8] { PackageResources.envelope_v1_schema_json }

    func register(on router: Router<IngestRequestContext>) {
        router.get("/openapi.json") { _, _ in
            APIResponse.json(.ok, Self.openAPIDocument)
        }
        router.get("/schemas/envelope-v1.json") { _, _ in
            APIResponse.json(.ok, Self.envelopeSchema, contentType: "application/schema+json")
        }
    }
}
