import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import BeekonIngest

extension Ingest {
    /// One ordered list of schema steps for both stores (`SchemaStep`): each store takes every
    /// step, in order, under names that never change (they are in deployed databases).
    @Suite("Schema steps")
    struct SchemaSteps {
        /// SQLite's names as deployed databases recorded them (GRDB's `grdb_migrations`).
        static let deployedSQLiteNames = [
            "v1", "v2-events", "v3-device-status", "v4-proximity", "v5-locate", "v6-privacy-zone", "v7-track-overview",
            "v8-device-identity", "v9-push", "v10-share-scope", "v11-credentials", "v12-circles", "v13-nudges",
        ]

        @Test func theFrozenNamesKeepTheirSteps() {
            #expect(SchemaStep.allCases.compactMap(\.sqliteName) == SchemaSteps.deployedSQLiteNames)
            #expect(SchemaStep.allCases.map(\.postgresVersion) == Array(1...SchemaStep.allCases.count))
            #expect(SchemaStep.partitions.postgresVersion == 10 && SchemaStep.partitions.sqliteName == nil)
            #expect(SchemaStep.shareScope.postgresVersion == 11 && SchemaStep.shareScope.sqliteName == "v10-share-scope")
        }

        @Test func everyStepHasStatementsOnEachStoreThatTakesIt() {
            for step in SchemaStep.allCases {
                #expect((SQLiteLocationStore.schema(for: step) != nil) == (step.sqliteName != nil), "\(step)")
                #expect(!PostgresSchema.statements(for: step).isEmpty, "\(step)")
            }
        }

        /// A step that adds a fix column is rendered from ``FixColumn``: for the deployed
        /// `privacy_zone` step, exactly the statement both stores ran before.
        @Test func anAddedFixColumnRendersTheDeployedStatement() {
            #expect(SchemaStep.privacyZone.addedFixColumn == .privacyZone)
            #expect(SQLiteLocationStore.schema(for: .privacyZone) == "ALTER TABLE locations ADD COLUMN privacy_zone TEXT")
            #expect(PostgresSchema.statements(for: .privacyZone) == ["ALTER TABLE locations ADD COLUMN privacy_zone TEXT"])
        }

        @Test func aFreshSQLiteStoreRecordsEveryStepInOrder() async throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("beekon-steps-\(UUID().uuidString).sqlite").path
            defer { for s in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + s) } }
            let store = try SQLiteLocationStore(path: path, logger: testLogger)
            try await store.migrate()
            let recorded = try await store.write { db in
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
            }
            #expect(recorded == SchemaSteps.deployedSQLiteNames)
        }

        @Suite(.tags(.postgres), .skippable(.postgres)) struct OnPostgreSQL {
            @Test func aFreshPostgreSQLStoreRecordsEveryStepInOrder() async throws {
                try await Partitions.withDatabase(migrate: true) { _, _, side in
                    var versions: [Int] = []
                    for try await v in try await side.query("SELECT version FROM beekon_schema ORDER BY version", logger: testLogger)
                        .decode(Int.self)
                    {
                        versions.append(v)
                    }
                    #expect(versions == SchemaStep.allCases.map(\.postgresVersion))
                }
            }
        }
    }
}
