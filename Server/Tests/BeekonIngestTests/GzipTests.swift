import BeekonGzip
import BeekonIngest
import Testing

extension Ingest {
    @Suite struct GzipLimits {
        @Test func roundTripsAndEnforcesTheLimit() throws {
            let text = Array(String(repeating: "beekon ", count: 50_000).utf8)
            let gz = Gzip.deflate(text)
            #expect(try Gzip.inflate(gz, limit: text.count) == text)
            #expect(throws: Gzip.Failure.tooLarge(limit: text.count - 1)) { try Gzip.inflate(gz, limit: text.count - 1) }
            #expect(throws: Gzip.Failure.self) { try Gzip.inflate(Array(gz.dropLast(4)), limit: 1 << 20) }
            #expect(throws: Gzip.Failure.self) { try Gzip.inflate(gz + [0], limit: 1 << 20) }
            #expect(throws: Gzip.Failure.self) { try Gzip.inflate([], limit: 1 << 20) }
            #expect(throws: Gzip.Failure.self) { try Gzip.inflate(Array("{}".utf8), limit: 1 << 20) }
        }
    }
}
