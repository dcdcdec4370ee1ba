/// Every step of the database schema, in order — one list that both stores follow.
///
/// A step that only adds an optional column to the fix table names it (``addedFixColumn``), and
/// both stores render its statement from that one description (``FixColumn/addColumn(_:)``).
/// Every other step each store gives through its own `switch` (`SQLiteLocationStore.schema(for:)`,
/// `PostgresSchema.statements(for:)`); a step one store does not need says so there
/// (``partitions`` is PostgreSQL's alone), and `SchemaStepTests` checks that each store has
/// every step. A store applies the steps in this order and records
/// each under its frozen name: SQLite in GRDB's `grdb_migrations` (``sqliteName``), PostgreSQL
/// in `beekon_schema` (``postgresVersion``). Those names are in databases already deployed, so
/// they never change; a new step goes at the end.
package enum SchemaStep: Int, CaseIterable, Sendable {
    /// Batches, locations, geofence events, tokens.
    case base = 1
    /// The live event log and shares.
    case events
    /// The interval a device declares and its last published status.
    case deviceStatus
    /// Beacon proximity events.
    case proximity
    /// Locate requests.
    case locate
    /// A fix's privacy zone.
    case privacyZone
    /// The history overview tier.
    case trackOverview
    /// Device identity: enrolment codes, bound credentials.
    case deviceIdentity
    /// Push tokens.
    case push
    /// Fixes partitioned by week (PostgreSQL only).
    case partitions
    /// Shares limited to hours of the day.
    case shareScope
    /// Enroller keys, person-bound codes, refresh-token families.
    case credentials
    /// People and circles.
    case circles
    /// Nudges for devices gone silent.
    case nudges

    /// The name SQLite records for the step; nil for a step SQLite does not take.
    package var sqliteName: String? {
        switch self {
        case .base: "v1"
        case .events: "v2-events"
        case .deviceStatus: "v3-device-status"
        case .proximity: "v4-proximity"
        case .locate: "v5-locate"
        case .privacyZone: "v6-privacy-zone"
        case .trackOverview: "v7-track-overview"
        case .deviceIdentity: "v8-device-identity"
        case .push: "v9-push"
        case .partitions: nil
        case .shareScope: "v10-share-scope"
        case .credentials: "v11-credentials"
        case .circles: "v12-circles"
        case .nudges: "v13-nudges"
        }
    }

    /// The fix column the step adds, when that is all it does (nil: a step of the stores' own).
    var addedFixColumn: FixColumn? {
        switch self {
        case .privacyZone: .privacyZone
        case .base, .events, .deviceStatus, .proximity, .locate, .trackOverview, .deviceIdentity, .push, .partitions,
            .shareScope, .credentials, .circles, .nudges:
            nil
        }
    }

    /// The version PostgreSQL records for the step (its position in the list).
    package var postgresVersion: Int { rawValue }
}
