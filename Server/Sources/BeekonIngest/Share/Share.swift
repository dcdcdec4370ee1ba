import BeekonWire
import Foundation

/// A scoped, revocable read grant for viewers (`beekon-ingest share create`, `POST /v1/shares`).
package struct Share: Sendable, Equatable, Codable {
    /// Public id (`sh_…`), used to list and revoke; not a credential.
    package var id: String
    /// A free-text label, e.g. who it was given to.
    package var label: String?
    /// The devices it covers; nil for all.
    package var devices: [UUID]?
    /// When it was created (Unix ms).
    package var createdAtMillis: Int64
    /// When it stops working (Unix ms); nil for never.
    package var expiresAtMillis: Int64?
    /// When it was revoked (Unix ms); nil while active.
    package var revokedAtMillis: Int64?
    /// What its viewers may see (history window, precision, live, locate, hours of the day, …).
    package var scope: ShareScope

    /// Creates a share.
    package init(
        id: String, label: String?, devices: [UUID]?, createdAtMillis: Int64, expiresAtMillis: Int64?,
        scope: ShareScope, revokedAtMillis: Int64? = nil
    ) {
        self.id = id
        self.label = label
        self.devices = devices
        self.createdAtMillis = createdAtMillis
        self.expiresAtMillis = expiresAtMillis
        self.scope = scope
        self.revokedAtMillis = revokedAtMillis
    }

    /// What it lets a viewer see.
    var viewerScope: ViewerScope {
        ViewerScope(devices: devices.map(Set.init), rules: scope, shareId: id)
    }

    enum CodingKeys: String, CodingKey {
        case id, label, devices
        case createdAtMillis = "created_at_ms"
        case expiresAtMillis = "expires_at_ms"
        case revokedAtMillis = "revoked_at_ms"
    }

    /// Decodes a share's JSON (its scope's keys sit beside the others).
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id), label: try c.decodeIfPresent(String.self, forKey: .label),
            devices: try c.decodeIfPresent([UUID].self, forKey: .devices),
            createdAtMillis: try c.decode(Int64.self, forKey: .createdAtMillis),
            expiresAtMillis: try c.decodeIfPresent(Int64.self, forKey: .expiresAtMillis), scope: try ShareScope(from: decoder),
            revokedAtMillis: try c.decodeIfPresent(Int64.self, forKey: .revokedAtMillis))
    }

    /// Device ids in the wire's lowercase form; absent optionals as `null`; the scope's keys beside the others.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(label, forKey: .label)
        try c.encode(devices?.map(\.wireString), forKey: .devices)
        try c.encode(createdAtMillis, forKey: .createdAtMillis)
        try c.encode(expiresAtMillis, forKey: .expiresAtMillis)
        try c.encode(revokedAtMillis, forKey: .revokedAtMillis)
        try scope.encode(to: encoder)
    }
}

/// One use of a share: who (the share), when, what (endpoint and path), and the outcome.
package struct ShareAccess: Sendable, Equatable, Codable {
    /// The share used.
    package var shareId: String
    /// When (Unix ms).
    package var atMillis: Int64
    /// The endpoint: `devices`, `sessions`, `track`, `fixes`, `live`.
    package var what: String
    /// The request path.
    package var path: String
    /// `granted` (refused uses are counted, not recorded: issue 28).
    package var outcome: String

    /// Creates a record.
    package init(shareId: String, atMillis: Int64, what: String, path: String, outcome: String) {
        self.shareId = shareId
        self.atMillis = atMillis
        self.what = what
        self.path = path
        self.outcome = outcome
    }

    enum CodingKeys: String, CodingKey {
        case shareId = "share_id"
        case atMillis = "at_ms"
        case what, path, outcome
    }
}

/// How the share access log stays bounded (issue 28): only granted uses are recorded (refused
/// tokens are counted in `beekon_share_refused_total`), each path is cut to `maxPathBytes`, and
/// each insert deletes the rows beyond the newest `maxRows` and the oldest rows past `maxAgeSeconds`.
package struct ShareAccessRetention: Sendable, Equatable {
    /// Rows kept at most.
    package var maxRows: Int
    /// Rows older than this are deleted.
    package var maxAgeSeconds: Int
    /// A recorded path is cut to this many bytes of UTF-8.
    package static let maxPathBytes = 256
    /// Old rows deleted per insert at most: more than one, so the age bound catches up.
    static let pruneBatch = 64

    /// Creates a retention policy (default: 100,000 rows, 30 days).
    package init(maxRows: Int = 100_000, maxAgeSeconds: Int = 30 * 86_400) {
        self.maxRows = max(1, maxRows)
        self.maxAgeSeconds = max(1, maxAgeSeconds)
    }
}

/// Persistence of shares and their access records.
package protocol ShareStore: Sendable {
    /// Stores a new share with the SHA-256 (hex) of its token.
    func createShare(_ share: Share, tokenHash: String) async throws(StoreError)
    /// Every share, newest first.
    func shares() async throws(StoreError) -> [Share]
    /// The share whose token has this hash.
    func share(tokenHash: String) async throws(StoreError) -> Share?
    /// Marks a share revoked; false when no active share has that id.
    func revokeShare(id: String, atMillis: Int64) async throws(StoreError) -> Bool
    /// Records one use, then deletes what `retention` no longer keeps: rows beyond the newest
    /// `maxRows`, and up to `ShareAccessRetention.pruneBatch` of the oldest rows older than `maxAgeSeconds`.
    func recordShareAccess(_ access: ShareAccess, retention: ShareAccessRetention) async throws(StoreError)
    /// The newest access records (of one share, or all), newest first.
    func shareAccess(shareId: String?, limit: Int) async throws(StoreError) -> [ShareAccess]
}
