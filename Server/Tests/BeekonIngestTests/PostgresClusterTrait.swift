@testable import BeekonIngest
import PostgresNIO
import PostgresTestCluster
import Testing

/// Starts one PostgreSQL cluster for a whole suite and removes it afterwards;
/// tests read it from `PostgresClusterTrait.current`. Fails loudly when the
/// binaries are missing, unless `BEEKON_SKIP_POSTGRES=1`.
struct PostgresClusterTrait: SuiteTrait, TestScoping {
    @TaskLocal static var current: PostgresCluster?

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard !PostgresCluster.skipped else {
            try await function()
            return
        }
        // initdb, pg_ctl start and stop wait for child processes: off the cooperative pool.
        let cluster = try await blocking { try PostgresCluster.start() }
        do {
            try await Self.$current.withValue(cluster) { try await function() }
        } catch {
            await blocking { cluster.stop() }
            throw error
        }
        await blocking { cluster.stop() }
    }
}

extension Trait where Self == PostgresClusterTrait {
    /// A PostgreSQL cluster for the suite.
    static var postgresCluster: PostgresClusterTrait { PostgresClusterTrait() }
}

extension PostgresConnection {
    /// A connection of the test's own to `location`'s database, beside the store's pool: for
    /// reading rows, locks and plans directly. The caller closes it.
    static func side(to location: PostgresLocation, id: Int = 1) async throws -> PostgresConnection {
        try await connect(
            configuration: PostgresConnection.Configuration(
                host: location.host, port: location.port, username: location.username, password: location.password,
                database: location.database, tls: .disable),
            id: id, logger: testLogger)
    }
}
